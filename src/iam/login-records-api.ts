import {
  BEARER,
  DEFAULT_STATUS_RESPONSE,
  jsonResponse,
  listEnvelope,
  schemaRef,
  statusResponse,
  type ApiContext,
  type ApiDescription,
  type Parameter,
} from '../http/openapi-components.ts';
import { pagingParameters } from '../list-query/list-query-api.ts';
import { LABEL_SELECTOR_PATTERN } from '../list-query/label-selector.ts';

const parameters: Parameter[] = [
  { name: 'user', in: 'path', required: true, schema: { type: 'string' } },
  ...pagingParameters('records', 'Default `false`: newest first.'),
  {
    name: 'sortBy',
    in: 'query',
    description: '`createTime` is `creationTimestamp`; ties broken by name.',
    schema: {
      type: 'string',
      enum: ['name', 'creationTimestamp', 'createTime'],
      default: 'creationTimestamp',
    },
  },
  { name: 'name', in: 'query', description: 'Substring of the record name.', schema: { type: 'string' } },
  {
    name: 'labelSelector',
    in: 'query',
    description: 'Kubernetes label selector over the records’ labels (grammar as for the node list).',
    schema: { type: 'string', pattern: LABEL_SELECTOR_PATTERN },
  },
];

/** GET /kapis/iam.<platform>.io/v1alpha2/users/{user}/loginrecords: the original's login history. */
export function loginRecordsApi(ctx: ApiContext): ApiDescription {
  return {
    tags: [{ name: 'iam', description: 'Users’ login history (the original’s LoginRecord objects).' }],
    schemas: {
      LoginRecord: {
        type: 'object',
        description: 'A LoginRecord object as the kube-apiserver stores it.',
        required: ['apiVersion', 'kind', 'metadata', 'spec'],
        properties: {
          apiVersion: { type: 'string' },
          kind: { const: 'LoginRecord' },
          metadata: { type: 'object' },
          spec: {
            type: 'object',
            required: ['type', 'success', 'reason'],
            properties: {
              type: { type: 'string' },
              provider: { type: 'string' },
              sourceIP: { type: 'string' },
              userAgent: { type: 'string' },
              success: { type: 'boolean' },
              reason: { type: 'string' },
            },
          },
        },
      },
      LoginRecordList: listEnvelope('LoginRecord'),
    },
    paths: {
      [`/kapis/iam.${ctx.platformName}.io/v1alpha2/users/{user}/loginrecords`]: {
        get: {
          operationId: 'listLoginRecords',
          tags: ['iam'],
          summary: 'A user’s login records: own records, or Kubernetes RBAC `list` on `loginrecords`',
          security: BEARER,
          parameters,
          responses: {
            '200': jsonResponse('A page of login records.', schemaRef('LoginRecordList'), {
              'Cache-Control': { schema: { const: 'no-store' } },
            }),
            '400': statusResponse('A known parameter is malformed or repeated; the message names it.'),
            '401': statusResponse('No or invalid bearer token.'),
            '403': statusResponse('Another user’s records without RBAC `list` on `loginrecords`.'),
            '404': statusResponse('The loginrecords CRD is not installed: no records are kept.'),
            default: DEFAULT_STATUS_RESPONSE,
          },
        },
      },
    },
  };
}
