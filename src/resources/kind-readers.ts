import { createHash } from 'node:crypto';
import type { Freshness } from '../cluster/informer.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import type { ListQuery } from '../list-query/list-query.ts';
import { BodyMemo, EtagMemo, PreparedBody } from '../nodes/prepared-response.ts';
import type { CallerLister, Pushdown } from './caller-lister.ts';
import type { Annotator } from './computed-annotations.ts';
import { field, type KubeObject } from './kube-object.ts';
import { apiVersionOf, escapeFieldValue, type ResourceKind } from './kinds.ts';
import { ObjectSelector, selectObjects, type ObjectTest, type Selection } from './object-selection.ts';
import type { WatchedKind } from './watched-kind.ts';
import { LabelSelector } from '../list-query/label-selector.ts';

/** What a list or get answers with: its ETag (known before the body is built), then the body. */
export interface Answer {
  etag: string;
  body(): PreparedBody;
  /** Set while a cache cannot reach the kube-apiserver: how old its data may be. */
  freshness?: Freshness;
  /** Where the page was chosen, when not the kind's usual source (pods: `index` or `apiserver`). */
  source?: string;
}

export interface ListRequest {
  identity: Identity;
  /** From the path; undefined for the cluster-wide list. */
  namespace: string | undefined;
  query: ListQuery;
}

export interface GetRequest {
  identity: Identity;
  namespace: string | undefined;
  name: string;
}

/** Serves one kind's list and get, from wherever that kind is kept. */
export interface KindReader {
  list(request: ListRequest): Promise<Answer>;
  get(request: GetRequest): Promise<Answer>;
}

export interface ReaderOptions {
  /** `<platform>.io/alias-name`, searched by `?alias=`. */
  aliasAnnotation: string;
}

/** One item as served: kind and apiVersion first (lists from the kube-apiserver leave them out). */
function served(kind: ResourceKind, object: KubeObject): KubeObject {
  const { managedFields: _dropped, ...metadata } = object.metadata ?? {};
  return { kind: kind.kind, apiVersion: apiVersionOf(kind), ...object, metadata };
}

export function listBody(kind: ResourceKind, selection: Selection): Buffer {
  return Buffer.from(
    JSON.stringify({ items: selection.items.map((o) => served(kind, o)), totalItems: selection.totalItems }),
  );
}

function digest(text: string): string {
  return createHash('sha1').update(text).digest('base64url').slice(0, 16);
}

function notFound(kind: ResourceKind, name: string): ApiError {
  return new ApiError('NotFound', `${kind.resource} "${name}" not found`, {
    details: { name, kind: kind.resource },
  });
}

/** A kind kept by a watch: pages are cut from memory and remembered until the content changes. */
export class CachedKindReader implements KindReader {
  readonly #kind: ResourceKind;
  readonly #cache: WatchedKind;
  readonly #options: ReaderOptions;
  readonly #etags = new EtagMemo({ maxEntries: 10_000 });
  readonly #bodies: BodyMemo;

  constructor(cache: WatchedKind, options: ReaderOptions & { memoMaxBytes: number }) {
    this.#kind = cache.kind;
    this.#cache = cache;
    this.#options = options;
    this.#bodies = new BodyMemo({ maxBytes: options.memoMaxBytes });
  }

  #ready(): Freshness {
    if (!this.#cache.synced) {
      throw new ApiError(
        'Unavailable',
        `the ${this.#kind.resource} cache has not finished its first sync yet`,
        {
          retryAfterSeconds: 1,
        },
      );
    }
    return this.#cache.freshness();
  }

  async list({ namespace, query }: ListRequest): Promise<Answer> {
    const freshness = this.#ready();
    const stateTag = this.#cache.stateTag;
    const key = namespace === undefined ? query.canonical : JSON.stringify([namespace, query.canonical]);
    const etag = this.#etags.get(stateTag, key);
    return {
      etag,
      freshness,
      body: () =>
        this.#bodies.get(stateTag, key, etag, () => {
          const inScope = this.#cache.objects(namespace);
          return listBody(this.#kind, selectObjects(inScope, { kind: this.#kind, query, ...this.#options }));
        }),
    };
  }

  async get({ namespace, name }: GetRequest): Promise<Answer> {
    const freshness = this.#ready();
    const object = this.#cache.get(name, namespace);
    if (!object) throw notFound(this.#kind, name);
    const etag = `W/"${object.metadata?.resourceVersion ?? ''}"`;
    return {
      etag,
      freshness,
      body: () => new PreparedBody(etag, Buffer.from(JSON.stringify(served(this.#kind, object)))),
    };
  }
}

/**
 * A kind read from the kube-apiserver as the caller, selectors passed on, page cut here; with an
 * annotator, each object gets the kind's computed annotations (from caches) before it is selected, so
 * the `annotation` filter sees them as in the original.
 */
export class UpstreamKindReader implements KindReader {
  readonly #kind: ResourceKind;
  readonly #lister: CallerLister;
  readonly #options: ReaderOptions;
  readonly #annotator: Annotator | undefined;

  constructor(kind: ResourceKind, lister: CallerLister, options: ReaderOptions, annotator?: Annotator) {
    this.#kind = kind;
    this.#lister = lister;
    this.#options = options;
    this.#annotator = annotator;
  }

  /** The annotator's state, read before the objects (so an ETag never claims newer annotations). */
  #annotations(): { tag: string; freshness?: Freshness } {
    const annotator = this.#annotator;
    if (!annotator) return { tag: '' };
    if (!annotator.ready) {
      throw new ApiError(
        'Unavailable',
        `the caches behind the ${this.#kind.resource} annotations have not finished their first sync yet`,
        { retryAfterSeconds: 1 },
      );
    }
    return { tag: annotator.tag(), freshness: annotator.freshness() };
  }

  async list({ identity, namespace, query }: ListRequest): Promise<Answer> {
    const kind = this.#kind;
    const annotations = this.#annotations();
    const annotator = this.#annotator;
    const wanted = query.filters.get('namespace');
    const scope = namespace ?? wanted;
    const tests: ObjectTest[] = [];
    const serviceName = query.filters.get('serviceName');
    if (serviceName !== undefined && kind.filters['serviceName']) {
      tests.push(await this.#servicePods(identity, scope, serviceName));
    }
    const { pushdown, applied } = pushdownOf(kind, query);
    const selector = new ObjectSelector({ kind, query, ...this.#options, appliedUpstream: applied, tests });
    let resourceVersion = 'none';
    // `/namespaces/a/pods?namespace=b` selects nothing, as in the original.
    if (namespace === undefined || wanted === undefined || wanted === namespace) {
      resourceVersion = await this.#lister.list(identity, kind, scope, pushdown, (items) =>
        selector.add(annotator ? items.map((o) => annotator.annotate(o)) : items),
      );
    }
    const selection = selector.result();
    const etag = `W/"${resourceVersion}.${digest(JSON.stringify([kind.resource, namespace ?? null, query.canonical, annotations.tag]))}"`;
    return {
      etag,
      body: () => new PreparedBody(etag, listBody(kind, selection)),
      ...(annotations.freshness ? { freshness: annotations.freshness } : {}),
    };
  }

  async get({ identity, namespace, name }: GetRequest): Promise<Answer> {
    const annotations = this.#annotations();
    const listed = await this.#lister.get(identity, this.#kind, namespace, name);
    const object = this.#annotator ? this.#annotator.annotate(listed) : listed;
    const version = listed.metadata?.resourceVersion ?? '';
    const etag = this.#annotator ? `W/"${version}.${digest(annotations.tag)}"` : `W/"${version}"`;
    return {
      etag,
      body: () => new PreparedBody(etag, Buffer.from(JSON.stringify(served(this.#kind, object)))),
      ...(annotations.freshness ? { freshness: annotations.freshness } : {}),
    };
  }

  /**
   * Pods selected by the Service of that name in their own namespace (read as the caller); a Service
   * without a selector selects nothing, as in the original.
   */
  async #servicePods(identity: Identity, namespace: string | undefined, name: string): Promise<ObjectTest> {
    const services: ResourceKind = { ...this.#kind, resource: 'services', kind: 'Service', filters: {} };
    const selectors = new Map<string, LabelSelector>();
    await this.#lister.list(
      identity,
      services,
      namespace,
      { fieldSelector: `metadata.name=${escapeFieldValue(name)}` },
      (items) => {
        for (const service of items) {
          const selector = field(service, 'spec', 'selector');
          if (!selector || typeof selector !== 'object') continue;
          const requirements = Object.entries(selector as Record<string, unknown>)
            .filter((entry): entry is [string, string] => typeof entry[1] === 'string')
            .map(([key, value]) => ({ key, operator: '=' as const, values: [value] }));
          if (requirements.length > 0)
            selectors.set(service.metadata?.namespace ?? '', new LabelSelector(requirements));
        }
      },
    );
    return (pod) => selectors.get(pod.metadata?.namespace ?? '')?.matches(pod.metadata?.labels) ?? false;
  }
}

/** The selectors the kube-apiserver can apply for this query, and which kind filters they cover. */
export function pushdownOf(
  kind: ResourceKind,
  query: ListQuery,
): { pushdown: Pushdown; applied: Set<string> } {
  const labels = [query.labelSelector, query.label].filter((s) => !s.empty).map(String);
  const fields: string[] = [];
  const applied = new Set<string>();
  for (const [parameter, value] of query.filters) {
    const toField = kind.filters[parameter]?.fieldSelector;
    if (!toField) continue;
    fields.push(toField(value));
    applied.add(parameter);
  }
  if (query.names?.size === 1) fields.push(`metadata.name=${escapeFieldValue([...query.names][0]!)}`);
  const given = query.filters.get('fieldSelector');
  if (given !== undefined && kind.fieldSelectorParameter) fields.push(given);
  const pushdown: Pushdown = {};
  if (labels.length > 0) pushdown.labelSelector = labels.join(',');
  if (fields.length > 0) pushdown.fieldSelector = fields.join(',');
  return { pushdown, applied };
}
