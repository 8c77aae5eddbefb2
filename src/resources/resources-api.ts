import {
  BEARER,
  DEFAULT_STATUS_RESPONSE,
  jsonResponse,
  listEnvelope,
  response,
  schemaRef,
  statusResponse,
  type ApiContext,
  type ApiDescription,
  type Parameter,
  type Paths,
} from '../http/openapi-components.ts';
import { pagingParameters } from '../list-query/list-query-api.ts';
import { LABEL_SELECTOR_PATTERN } from '../list-query/label-selector.ts';
import { COMPUTED_ANNOTATIONS } from './computed-annotations.ts';
import { apiVersionOf, type ResourceKind } from './kinds.ts';

const retryAfter = {
  'Retry-After': { description: 'Seconds.', schema: { type: 'string', pattern: '^\\d+$' } },
};
const bearerChallenge = {
  'WWW-Authenticate': {
    description: '`Bearer …` challenge.',
    schema: { type: 'string', pattern: '^Bearer' },
  },
};
const cacheHeaders = {
  ETag: {
    description:
      'Weak. Lists: from the data version (the cache state, or the resourceVersion of the list the kube-apiserver answered), the canonical query and, where the kind has computed annotations, the state of the caches they come from; one object: its resourceVersion (and that state).',
    required: true,
    schema: { type: 'string', pattern: '^W/"[^"]*"$' },
  },
  'Cache-Control': { required: true, schema: { const: 'private, no-cache' } },
  Vary: { schema: { const: 'Accept-Encoding' } },
  'X-Cache-Stale-Seconds': {
    description:
      'Only for a cached kind, or a kind with computed annotations, whose watch is down: the data (or the annotations) is at most this many seconds old.',
    schema: { type: 'string', pattern: '^\\d+$' },
  },
};
const okHeaders = {
  ...cacheHeaders,
  'Content-Encoding': {
    description: '`gzip` when the client accepts it and the body is at least `resources.gzipMinBytes`.',
    schema: { const: 'gzip' },
  },
};
const ifNoneMatch: Parameter = {
  name: 'If-None-Match',
  in: 'header',
  description: 'An ETag from an earlier answer: 304 without a body when nothing changed.',
  schema: { type: 'string' },
};
const selector = (name: string, description: string): Parameter => ({
  name,
  in: 'query',
  description: `${description} Kubernetes label selector syntax (\`!key\`, \`key!=v\`, \`in\`, \`notin\`, …); malformed: a 400 naming \`${name}\`.`,
  schema: { type: 'string', pattern: LABEL_SELECTOR_PATTERN },
});

/** The parameters every kind's list takes, then the kind's own. */
function listParameters(kind: ResourceKind, clusterWide: boolean): Parameter[] {
  const parameters: Parameter[] = [
    ...pagingParameters(
      'items',
      'The spellings Go’s strconv.ParseBool accepts. Default: descending (newest first).',
    ),
    {
      name: 'sortBy',
      in: 'query',
      description:
        '`createTime` is `creationTimestamp`; `updateTime` is `lastUpdateTimestamp` (docs/resources-api.md says what it is per kind; the creation time where the kind has none). Ties are broken by name, then namespace.',
      schema: {
        type: 'string',
        enum: [
          'name',
          'creationTimestamp',
          'createTime',
          'lastUpdateTimestamp',
          'updateTime',
          ...(kind.extraSorts ?? []),
        ],
        default: 'creationTimestamp',
      },
    },
    {
      name: 'name',
      in: 'query',
      description:
        kind.resource === 'customresourcedefinitions'
          ? 'Case-sensitive substring of the name or of `spec.names.kind`.'
          : 'Case-sensitive substring of the name.',
      schema: { type: 'string' },
    },
    { name: 'names', in: 'query', description: 'Comma-separated exact names.', schema: { type: 'string' } },
    { name: 'uid', in: 'query', description: 'Exact `metadata.uid`.', schema: { type: 'string' } },
    selector('labelSelector', 'Passed on to the kube-apiserver where the kind is read from it.'),
    selector('label', 'Matched against labels, like `labelSelector` (both must hold).'),
    selector('annotation', 'Matched against annotations.'),
    {
      name: 'alias',
      in: 'query',
      description: 'Case-sensitive substring of the `<platform>.io/alias-name` annotation.',
      schema: { type: 'string' },
    },
  ];
  for (const [name, filter] of Object.entries(kind.filters)) {
    parameters.push({
      name,
      in: 'query',
      description: filter.description,
      schema: filter.values ? { type: 'string', enum: [...filter.values] } : { type: 'string' },
    });
  }
  if (kind.namespaced && clusterWide) {
    parameters.push({
      name: 'namespace',
      in: 'query',
      description: 'Only objects of this namespace (read from that namespace only).',
      schema: { type: 'string' },
    });
  }
  if (kind.fieldSelectorParameter) {
    parameters.push({
      name: 'fieldSelector',
      in: 'query',
      description:
        'Passed on to the kube-apiserver as it is (e.g. `type=kubernetes.io/dockerconfigjson`); one it refuses is a 400 naming `fieldSelector`.',
      schema: { type: 'string' },
    });
  }
  parameters.push(ifNoneMatch);
  return parameters;
}

const pathParameter = (name: string): Parameter => ({
  name,
  in: 'path',
  required: true,
  schema: { type: 'string' },
});

/** `GET …/v1alpha3/{resources}` and friends for the given kinds (nodes are described by the nodes module). */
export function resourcesApi(ctx: ApiContext, kinds: readonly ResourceKind[]): ApiDescription {
  const base = `/kapis/resources.${ctx.platformName}.io/v1alpha3`;
  const common = {
    '401': statusResponse('No or invalid bearer token.', bearerChallenge),
    '403': statusResponse(
      'Kubernetes RBAC does not allow the caller to list/get this kind (in this namespace).',
    ),
    '503': statusResponse(
      'The kind’s cache has not synced yet, the kube-apiserver cannot be reached, or authorization cannot be decided.',
      retryAfter,
    ),
    default: DEFAULT_STATUS_RESPONSE,
  };
  const notModified = response('Unchanged since the ETag in If-None-Match; no body.', {
    headers: cacheHeaders,
  });
  const schemas: ApiDescription['schemas'] = {};
  const paths: Paths = {};
  for (const kind of kinds) {
    const schemaName = `Resource${kind.kind}`;
    const computed = COMPUTED_ANNOTATIONS[kind.resource] ?? [];
    const annotations =
      computed.length === 0
        ? {}
        : {
            annotations: {
              type: 'object',
              description: 'The object’s own annotations, plus those computed here.',
              required: computed.map((a) => `${ctx.platformName}.io/${a.name}`),
              properties: Object.fromEntries(
                computed.map((a) => [
                  `${ctx.platformName}.io/${a.name}`,
                  { type: 'string', pattern: a.pattern, description: `Computed: ${a.description}` },
                ]),
              ),
            },
          };
    schemas[schemaName] = {
      type: 'object',
      description: `A ${kind.kind} (${apiVersionOf(kind)}) as the kube-apiserver returns it, minus managedFields.`,
      required: ['kind', 'apiVersion', 'metadata'],
      properties: {
        kind: { const: kind.kind },
        apiVersion: { const: apiVersionOf(kind) },
        metadata: {
          type: 'object',
          required: ['name', 'uid', 'resourceVersion', 'creationTimestamp'],
          properties: {
            name: { type: 'string' },
            ...(kind.namespaced ? { namespace: { type: 'string' } } : {}),
            uid: { type: 'string' },
            resourceVersion: { type: 'string' },
            creationTimestamp: { type: 'string', format: 'date-time' },
            ...annotations,
          },
          not: { required: ['managedFields'] },
        },
      },
    };
    schemas[`${schemaName}List`] = listEnvelope(schemaName);
    const listOperation = (clusterWide: boolean) => ({
      operationId: `list${kind.kind}${clusterWide ? '' : 'InNamespace'}`,
      tags: ['resources'],
      summary: clusterWide
        ? `List ${kind.resource}${kind.namespaced ? ' across all namespaces' : ''}: filter, sort, page`
        : `List ${kind.resource} of one namespace: filter, sort, page`,
      description: kind.why,
      security: BEARER,
      parameters: [
        ...(clusterWide ? [] : [pathParameter('namespace')]),
        ...listParameters(kind, clusterWide),
      ],
      responses: {
        '200': jsonResponse(`A page of ${kind.resource}.`, schemaRef(`${schemaName}List`), okHeaders),
        '304': notModified,
        '400': statusResponse(
          'A known parameter is malformed or repeated; `details.causes[0].field` names it.',
        ),
        ...common,
      },
    });
    const getOperation = (namespaced: boolean) => ({
      operationId: `get${kind.kind}`,
      tags: ['resources'],
      summary: `One ${kind.kind}`,
      security: BEARER,
      parameters: [...(namespaced ? [pathParameter('namespace')] : []), pathParameter('name'), ifNoneMatch],
      responses: {
        '200': jsonResponse(`The ${kind.kind}.`, schemaRef(schemaName), okHeaders),
        '304': notModified,
        '404': statusResponse(`No such object: \`${kind.resource} "<name>" not found\`.`),
        ...common,
      },
    });
    paths[`${base}/${kind.resource}`] = { get: listOperation(true) };
    if (kind.namespaced) {
      paths[`${base}/namespaces/{namespace}/${kind.resource}`] = { get: listOperation(false) };
      paths[`${base}/namespaces/{namespace}/${kind.resource}/{name}`] = { get: getOperation(true) };
    } else {
      paths[`${base}/${kind.resource}/{name}`] = { get: getOperation(false) };
    }
  }
  return { schemas, paths };
}
