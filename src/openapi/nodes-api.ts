import {
  BEARER,
  DEFAULT_STATUS_RESPONSE,
  jsonResponse,
  response,
  schemaRef,
  statusResponse,
  type ApiContext,
  type ApiDescription,
  type Parameter,
} from './components.ts';

const bearerChallenge = {
  'WWW-Authenticate': {
    description: '`Bearer …` challenge.',
    schema: { type: 'string', pattern: '^Bearer' },
  },
};
const etag = {
  ETag: { description: 'Changes with the cache state and the query.', schema: { type: 'string' } },
};

const ifNoneMatch: Parameter = {
  name: 'If-None-Match',
  in: 'header',
  description: 'An ETag from an earlier answer: 304 when nothing changed.',
  schema: { type: 'string' },
};

const listParameters: Parameter[] = [
  {
    name: 'page',
    in: 'query',
    description: '1-based page number.',
    schema: { type: 'integer', minimum: 1, default: 1 },
  },
  {
    name: 'limit',
    in: 'query',
    description: 'Page size; default: all.',
    schema: { type: 'integer', minimum: 1 },
  },
  {
    name: 'sortBy',
    in: 'query',
    description: 'Ties are broken by name, so paging is stable.',
    schema: {
      type: 'string',
      enum: ['name', 'creationTimestamp', 'createTime'],
      default: 'creationTimestamp',
    },
  },
  {
    name: 'ascending',
    in: 'query',
    schema: { type: 'boolean', default: false },
  },
  { name: 'name', in: 'query', description: 'Substring of the node name.', schema: { type: 'string' } },
  {
    name: 'labelSelector',
    in: 'query',
    description: 'Kubernetes label selector (`=`, `==`, `!=`, `in`, `notin`, `key`, `!key`).',
    schema: { type: 'string' },
  },
  {
    name: 'status',
    in: 'query',
    description: 'Node state, as defined in the README.',
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
    default: DEFAULT_STATUS_RESPONSE,
  };
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
            required: ['name', 'selfLink', 'uid', 'resourceVersion', 'creationTimestamp'],
            properties: {
              name: { type: 'string' },
              selfLink: { type: 'string', pattern: '^/api/v1/nodes/' },
              uid: { type: 'string', format: 'uuid' },
              resourceVersion: { type: 'string', pattern: '^\\d+$' },
              creationTimestamp: { type: 'string', format: 'date-time' },
              labels: { ...stringMap, description: 'Values may be empty strings.' },
              annotations: { ...stringMap, description: 'Values may hold JSON text, kept verbatim.' },
            },
            not: { required: ['managedFields'] },
          },
          spec: { type: 'object' },
          status: { type: 'object' },
        },
      },
      NodeList: {
        type: 'object',
        required: ['items', 'totalItems'],
        properties: {
          items: { type: 'array', items: schemaRef('Node') },
          totalItems: {
            type: 'integer',
            minimum: 0,
            description: 'Count after filtering, before paging.',
          },
        },
      },
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
            '200': jsonResponse('A page of nodes.', schemaRef('NodeList'), etag),
            '304': response('Unchanged since the ETag in If-None-Match.', { headers: etag }),
            '400': statusResponse('A known parameter has a malformed value; the message names it.'),
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
            '200': jsonResponse('The node.', schemaRef('Node'), etag),
            '304': response('Unchanged since the ETag in If-None-Match.', { headers: etag }),
            '404': statusResponse('No such node.'),
            ...common,
          },
        },
      },
    },
  };
}
