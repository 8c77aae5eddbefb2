import { allocationKeys, allocationPrefix } from './node-allocation.ts';
import {
  BEARER,
  DEFAULT_STATUS_RESPONSE,
  jsonResponse,
  response,
  listEnvelope,
  schemaRef,
  statusResponse,
  type ApiContext,
  type ApiDescription,
  type Parameter,
} from '../http/openapi-components.ts';
import { pagingParameters } from '../list-query/list-query-api.ts';
import { LABEL_SELECTOR_PATTERN } from '../list-query/label-selector.ts';

const bearerChallenge = {
  'WWW-Authenticate': {
    description: '`Bearer …` challenge.',
    schema: { type: 'string', pattern: '^Bearer' },
  },
};
const retryAfter = {
  'Retry-After': { description: 'Seconds.', schema: { type: 'string', pattern: '^\\d+$' } },
};

/** Headers of every 200 and 304 of the node API. */
const cacheHeaders = {
  ETag: {
    description:
      'Weak. List: from the cache state (nodes and pod allocations) and the canonical query; one node: `W/"<resourceVersion>.<digest of its allocation annotations>"`.',
    required: true,
    schema: { type: 'string', pattern: '^W/"[^"]+"$' },
  },
  'Cache-Control': { required: true, schema: { const: 'private, no-cache' } },
  Vary: { schema: { const: 'Accept-Encoding' } },
  'X-Cache-Stale-Seconds': {
    description:
      'Only while the cache has no open watch on the kube-apiserver: the data is the last known state, at most this many seconds old.',
    schema: { type: 'string', pattern: '^\\d+(\\.\\d+)?$' },
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

/** Every known parameter may be given once; a malformed value is a 400 naming it. Unknown ones are ignored. */
const listParameters: Parameter[] = [
  ...pagingParameters('items', 'The spellings Go’s strconv.ParseBool accepts.'),
  {
    name: 'sortBy',
    in: 'query',
    description:
      "`createTime` is `creationTimestamp`; `lastUpdateTimestamp` (or `updateTime`) is the latest `lastTransitionTime` of the node's conditions, else its creation time. Ties are broken by name, so paging is stable.",
    schema: {
      type: 'string',
      enum: ['name', 'creationTimestamp', 'createTime', 'lastUpdateTimestamp', 'updateTime'],
      default: 'creationTimestamp',
    },
  },
  {
    name: 'name',
    in: 'query',
    description: 'Case-sensitive substring of the node name.',
    schema: { type: 'string' },
  },
  {
    name: 'labelSelector',
    in: 'query',
    description:
      'Kubernetes label selector, as the kube-apiserver parses it: comma-separated requirements, all of which must hold — ' +
      '`key` (exists), `!key` (absent), `key=v` / `key==v`, `key!=v` (absent or other value), `key in (a,b)`, ' +
      '`key notin (a,b)`, `key>n`, `key<n` (integer value). Keys are qualified names (optional lowercase DNS-subdomain ' +
      'prefix up to 253 characters and `/`, then up to 63 alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric); ' +
      'values are empty or up to 63 such characters; `key=` is the empty value, `key in ()` the set of the empty value. ' +
      'Spaces, tabs and newlines may surround tokens. Anything else is a 400 naming `labelSelector`.',
    schema: { type: 'string', pattern: LABEL_SELECTOR_PATTERN },
    examples: {
      role: { value: 'node-role.kubernetes.io/worker' },
      zones: { value: 'topology.kubernetes.io/zone in (a, b), !example.com/draining' },
      capacity: { value: 'tier!=gold,slots>3' },
    },
  },
  {
    name: 'names',
    in: 'query',
    description: 'Comma-separated exact node names. Empty: no filter.',
    schema: { type: 'string' },
  },
  {
    name: 'uid',
    in: 'query',
    description: 'Exact `metadata.uid`. Empty: no filter.',
    schema: { type: 'string' },
  },
  {
    name: 'label',
    in: 'query',
    description:
      'A selector in `labelSelector` syntax matched against labels (both must hold). Malformed: a 400 naming `label`.',
    schema: { type: 'string', pattern: LABEL_SELECTOR_PATTERN },
  },
  {
    name: 'annotation',
    in: 'query',
    description:
      "A selector in `labelSelector` syntax matched against the node's own annotations (not the allocation annotations this server adds). Malformed: a 400 naming `annotation`.",
    schema: { type: 'string', pattern: LABEL_SELECTOR_PATTERN },
  },
  {
    name: 'alias',
    in: 'query',
    description: `Case-sensitive substring of the \`<platform>.io/alias-name\` annotation. Empty: no filter.`,
    schema: { type: 'string' },
  },
  {
    name: 'status',
    in: 'query',
    description: 'Node state, defined in docs/nodes-api.md.',
    schema: { type: 'string', enum: ['running', 'warning', 'unschedulable'] },
  },
  ifNoneMatch,
];

const stringMap = { type: 'object', additionalProperties: { type: 'string' } } as const;

/** GET /kapis/resources.<platform>.io/v1alpha3/nodes[/{name}]: nodes from the watch-backed cache. */
export function nodesApi(ctx: ApiContext): ApiDescription {
  const base = `/kapis/resources.${ctx.platformName}.io/v1alpha3/nodes`;
  const common = {
    '401': statusResponse('No or invalid bearer token.', bearerChallenge),
    '403': statusResponse('Kubernetes RBAC does not allow the caller to list/get nodes.'),
    '503': statusResponse(
      'The node cache has not synced yet, or authorization cannot be decided (kube-apiserver unreachable, no recent answer).',
      retryAfter,
    ),
    default: DEFAULT_STATUS_RESPONSE,
  };
  const notModified = response('Unchanged since the ETag in If-None-Match; no body.', {
    headers: cacheHeaders,
  });
  return {
    tags: [{ name: 'resources', description: 'Cluster resources served from watch-backed caches.' }],
    schemas: {
      Node: {
        type: 'object',
        description: 'A Kubernetes Node (core/v1) as the kube-apiserver returns it, minus managedFields.',
        required: ['apiVersion', 'kind', 'metadata'],
        properties: {
          apiVersion: { const: 'v1' },
          kind: { const: 'Node' },
          metadata: {
            type: 'object',
            required: ['name', 'selfLink', 'uid', 'resourceVersion', 'creationTimestamp', 'annotations'],
            properties: {
              name: { type: 'string' },
              selfLink: { type: 'string', pattern: '^/api/v1/nodes/' },
              uid: { type: 'string', format: 'uuid' },
              resourceVersion: { type: 'string', pattern: '^\\d+$' },
              creationTimestamp: { type: 'string', format: 'date-time' },
              labels: { ...stringMap, description: 'Values may be empty strings.' },
              annotations: {
                ...stringMap,
                description:
                  "The node's annotations verbatim (values may hold JSON text), plus the eight allocation annotations `node.<platform>.io/{cpu,memory}-{requests,limits}[-fraction]` (docs/nodes-api.md).",
                required: allocationKeys(allocationPrefix(ctx.platformName)),
              },
            },
            not: { required: ['managedFields'] },
          },
          spec: { type: 'object' },
          status: { type: 'object' },
        },
      },
      NodeList: listEnvelope('Node'),
    },
    paths: {
      [base]: {
        get: {
          operationId: 'listNodes',
          tags: ['resources'],
          summary: 'List nodes: filter, sort, page',
          security: BEARER,
          parameters: listParameters,
          responses: {
            '200': jsonResponse('A page of nodes.', schemaRef('NodeList'), okHeaders),
            '304': notModified,
            '400': statusResponse(
              'A known parameter is malformed or repeated; the message and `details.causes[0].field` name it.',
            ),
            ...common,
          },
        },
      },
      [`${base}/{name}`]: {
        get: {
          operationId: 'getNode',
          tags: ['resources'],
          summary: 'One node',
          security: BEARER,
          parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }, ifNoneMatch],
          responses: {
            '200': jsonResponse('The node.', schemaRef('Node'), okHeaders),
            '304': notModified,
            '404': statusResponse(
              'No such node: `nodes "<name>" not found`, `details: {name, kind: "nodes"}`.',
            ),
            ...common,
          },
        },
      },
    },
  };
}
