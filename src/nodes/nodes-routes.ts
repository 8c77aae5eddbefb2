import { Router, type Request, type Response } from 'express';
import type { Registry } from 'prom-client';
import type { Identity } from '../kernel/identity.ts';
import { identityOf } from '../http/request-context.ts';
import { AUTHZ_STALE_HEADER, type Decision, type ResourceAttributes } from '../access/access-review.ts';
import { ApiError } from '../kernel/api-error.ts';
import { counter } from '../observability/metrics.ts';
import { seriesCounter } from '../observability/series-metrics.ts';
import { ListQueryParser } from '../list-query/list-query.ts';
import type { NodeSource } from './node-cache.ts';
import type { Selection } from './node-index.ts';
import { NODE_STATUSES } from './node-status.ts';
import {
  BodyMemo,
  EtagMemo,
  PreparedBody,
  sendJson,
  sendNotModified,
  setCacheHeaders,
} from './prepared-response.ts';

/** Says how old the served data is while the cache cannot reach the kube-apiserver. */
export const STALE_HEADER = 'X-Cache-Stale-Seconds';

export interface Authorizer {
  authorize(identity: Identity, attributes: ResourceAttributes): Promise<Decision>;
}

/** Says how old the authorization answer is when a cached one was used past its TTL (reviews failing). */
function setAuthzAge(res: Response, decision: Decision): void {
  if (decision.source === 'stale') res.setHeader(AUTHZ_STALE_HEADER, String(decision.ageSeconds));
}

export interface NodesRoutesOptions {
  platformName: string;
  nodes: NodeSource;
  authorizer: Authorizer;
  registry: Registry;
  /** Bodies at least this large are gzip-compressed for clients that accept it. */
  gzipMinBytes: number;
  /** Bound on the list bodies kept for repeated identical queries. */
  memoMaxBytes: number;
}

/** The question every list asks; frozen, so the authorizer keeps its cache key (access-review.ts). */
const LIST_NODES: ResourceAttributes = Object.freeze({ verb: 'list', group: '', resource: 'nodes' });

const OPEN = Buffer.from('{"items":[');
const COMMA = Buffer.from(',');

/** `{"items":[…],"totalItems":N}` from the entries' ready bytes. */
export function listBody(selection: Selection): Buffer {
  const parts: Buffer[] = [OPEN];
  selection.items.forEach((entry, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(entry.json);
  });
  parts.push(Buffer.from(`],"totalItems":${selection.totalItems}}`));
  return Buffer.concat(parts);
}

/** The base path of the resources API group, whose domain follows the platform name. */
export function resourcesApiPath(platformName: string): string {
  return `/kapis/resources.${platformName}.io/v1alpha3`;
}

/**
 * `GET …/v1alpha3/nodes` and `…/nodes/{name}`: authorised by Kubernetes RBAC for the caller, served
 * from the node cache with ETags, 304s and gzip.
 */
export function nodesRoutes(options: NodesRoutesOptions): Router {
  const { nodes, authorizer } = options;
  const base = resourcesApiPath(options.platformName);
  const memo = new BodyMemo({ maxBytes: options.memoMaxBytes });
  const etags = new EtagMemo({ maxEntries: 10_000 });
  const listQueries = new ListQueryParser({ statuses: NODE_STATUSES });
  const responses = seriesCounter(options.registry, {
    name: 'platform_node_responses_total',
    help: 'Node API answers by verb (list, get) and outcome (ok, not_modified, not_found).',
    labelNames: ['verb', 'outcome'],
  });
  // The list's outcomes, resolved once: every page request counts in one of them.
  const listOk = responses.series({ verb: 'list', outcome: 'ok' });
  const listNotModified = responses.series({ verb: 'list', outcome: 'not_modified' });
  const bodiesBuilt = counter(options.registry, {
    name: 'platform_node_list_bodies_built_total',
    help: 'Node list bodies assembled (answers to repeated queries of an unchanged cache are reused).',
  });

  /** Common to list and get: the cache must have synced; say how stale it is when disconnected. */
  const prepare = (res: Response) => {
    if (!nodes.synced) {
      throw new ApiError('Unavailable', 'the node cache has not finished its first sync yet', {
        retryAfterSeconds: 1,
      });
    }
    const freshness = nodes.freshness();
    if (!freshness.connected) res.setHeader(STALE_HEADER, String(freshness.staleSeconds));
  };

  const router = Router();

  router.get(`${base}/nodes`, async (req: Request, res: Response) => {
    setAuthzAge(res, await authorizer.authorize(identityOf(req), LIST_NODES));
    const query = listQueries.parse(req.url, () => req.query);
    prepare(res);
    const stateTag = nodes.stateTag;
    const etag = etags.get(stateTag, query.canonical);
    setCacheHeaders(res, etag);
    if (sendNotModified(req, res, etag)) {
      listNotModified.inc();
      return;
    }
    const prepared = memo.get(stateTag, query.canonical, etag, () => {
      bodiesBuilt.inc();
      return listBody(nodes.index.select(query));
    });
    listOk.inc();
    await sendJson(res, prepared, { gzipMinBytes: options.gzipMinBytes, acceptsGzip: acceptsGzip(req) });
  });

  router.get(`${base}/nodes/:name`, async (req: Request<{ name: string }>, res: Response) => {
    const { name } = req.params;
    setAuthzAge(
      res,
      await authorizer.authorize(identityOf(req), { verb: 'get', group: '', resource: 'nodes', name }),
    );
    prepare(res);
    const entry = nodes.index.get(name);
    if (!entry) {
      responses.inc({ verb: 'get', outcome: 'not_found' });
      throw new ApiError('NotFound', `nodes "${name}" not found`, { details: { name, kind: 'nodes' } });
    }
    // The node's resourceVersion and its allocation annotations identify the content.
    const etag = entry.etag;
    setCacheHeaders(res, etag);
    if (sendNotModified(req, res, etag)) {
      responses.inc({ verb: 'get', outcome: 'not_modified' });
      return;
    }
    responses.inc({ verb: 'get', outcome: 'ok' });
    await sendJson(res, new PreparedBody(etag, entry.json), {
      gzipMinBytes: options.gzipMinBytes,
      acceptsGzip: acceptsGzip(req),
    });
  });

  return router;
}

/** Without Accept-Encoding a client gets identity, whatever the RFC allows. */
function acceptsGzip(req: Request): boolean {
  return req.headers['accept-encoding'] !== undefined && req.acceptsEncodings('gzip', 'identity') === 'gzip';
}
