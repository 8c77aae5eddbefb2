import { Router, type Request, type Response } from 'express';
import type { Registry } from 'prom-client';
import { AUTHZ_STALE_HEADER, type ResourceAttributes } from '../access/access-review.ts';
import { identityOf } from '../http/request-context.ts';
import { ListQueryParser, type ListQueryOptions } from '../list-query/list-query.ts';
import { sendJson, sendNotModified, setCacheHeaders } from '../nodes/prepared-response.ts';
import { resourcesApiPath, STALE_HEADER, type Authorizer } from '../nodes/nodes-routes.ts';
import { counter } from '../observability/metrics.ts';
import type { Answer, KindReader } from './kind-readers.ts';
import { filterParameters, type ResourceKind } from './kinds.ts';

export interface ResourcesRoutesOptions {
  platformName: string;
  /** The kinds served here, each with its reader. */
  kinds: readonly { kind: ResourceKind; reader: KindReader }[];
  /** The nodes module's routes (`…/nodes`, `…/nodes/{name}`), mounted first: the hottest path. */
  nodes?: Router;
  authorizer: Authorizer;
  registry: Registry;
  gzipMinBytes: number;
}

export function listQueryOptions(kind: ResourceKind): ListQueryOptions<never> {
  return { filters: filterParameters(kind), ...(kind.extraSorts ? { extraSorts: kind.extraSorts } : {}) };
}

type Params = { namespace?: string; name?: string };

/**
 * `GET /kapis/resources.<platform>.io/v1alpha3/{resources}[/{name}]` and
 * `…/namespaces/{namespace}/{resources}[/{name}]` for every kind: authorised as the caller (list or
 * get on that kind, in that namespace or cluster-wide), then answered by the kind's reader with an
 * ETag, 304 and gzip. A kind not listed here has no route: 404.
 */
export function resourcesRoutes(options: ResourcesRoutesOptions): Router[] {
  const { authorizer } = options;
  const responses = counter(options.registry, {
    name: 'platform_resource_responses_total',
    help: 'Answers of the v1alpha3 resources API (nodes excepted) by resource, verb (list, get), outcome (ok, not_modified) and source (where the page was chosen: watch-cache, apiserver, index).',
    labelNames: ['resource', 'verb', 'outcome', 'source'],
  });

  const authorize = async (req: Request<Params>, res: Response, attributes: ResourceAttributes) => {
    const decision = await authorizer.authorize(identityOf(req), attributes);
    if (decision.source === 'stale') res.setHeader(AUTHZ_STALE_HEADER, String(decision.ageSeconds));
  };

  const send = async (
    req: Request<Params>,
    res: Response,
    kind: ResourceKind,
    verb: string,
    answer: Answer,
  ) => {
    if (answer.freshness && !answer.freshness.connected) {
      res.setHeader(STALE_HEADER, String(answer.freshness.staleSeconds));
    }
    setCacheHeaders(res, answer.etag);
    const labels = { resource: kind.resource, verb, source: answer.source ?? kind.source };
    if (sendNotModified(req, res, answer.etag)) {
      responses.inc({ ...labels, outcome: 'not_modified' });
      return;
    }
    responses.inc({ ...labels, outcome: 'ok' });
    await sendJson(res, answer.body(), { gzipMinBytes: options.gzipMinBytes, acceptsGzip: acceptsGzip(req) });
  };

  const base = resourcesApiPath(options.platformName);
  // Routes with their whole paths in one router of routes only, beside the node routes rather than
  // mounted under them: the app then calls a list's handler at once (src/http/path-guard.ts).
  const router = Router();
  for (const { kind, reader } of options.kinds) {
    const listQueries = new ListQueryParser(listQueryOptions(kind));
    const attributes = { group: kind.group, resource: kind.resource };

    const list = async (req: Request<Params>, res: Response) => {
      const namespace = req.params.namespace;
      await authorize(req, res, { verb: 'list', ...attributes, ...(namespace ? { namespace } : {}) });
      const query = listQueries.parse(req.url, () => req.query);
      await send(req, res, kind, 'list', await reader.list({ identity: identityOf(req), namespace, query }));
    };
    const get = async (req: Request<Params>, res: Response) => {
      const { namespace } = req.params;
      const name = req.params.name!;
      // A namespace is asked about in itself, as the kube-apiserver does: a RoleBinding in a namespace
      // that grants `get namespaces` lets its subjects read that namespace.
      const scope = namespace ?? (kind.resource === 'namespaces' ? name : undefined);
      await authorize(req, res, { verb: 'get', ...attributes, name, ...(scope ? { namespace: scope } : {}) });
      await send(req, res, kind, 'get', await reader.get({ identity: identityOf(req), namespace, name }));
    };

    if (kind.namespaced) {
      // As in the original, a namespaced kind's cluster path lists across all namespaces.
      router.get(`${base}/${kind.resource}`, list);
      router.get(`${base}/namespaces/:namespace/${kind.resource}`, list);
      router.get(`${base}/namespaces/:namespace/${kind.resource}/:name`, get);
    } else {
      router.get(`${base}/${kind.resource}`, list);
      router.get(`${base}/${kind.resource}/:name`, get);
    }
  }
  // The node routes share the base path, and come first.
  return options.nodes ? [options.nodes, router] : [router];
}

/** Without Accept-Encoding a client gets identity, whatever the RFC allows. */
function acceptsGzip(req: Request<Params>): boolean {
  return req.headers['accept-encoding'] !== undefined && req.acceptsEncodings('gzip', 'identity') === 'gzip';
}
