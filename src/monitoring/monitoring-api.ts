import {
  BEARER,
  DEFAULT_STATUS_RESPONSE,
  jsonResponse,
  schemaRef,
  statusResponse,
  type ApiContext,
  type ApiDescription,
  type Parameter,
  type Paths,
} from '../http/openapi-components.ts';
import { NAMED_METRICS_PATHS, TARGET_PATHS, WORKSPACE_STATISTICS, openApiPath } from './monitoring-paths.ts';
import { NOT_CONFIGURED } from './unconfigured-metrics.ts';

const metricsFilter: Parameter = {
  name: 'metrics_filter',
  in: 'query',
  description:
    'The metrics asked for, as the console sends them: names joined with `|`, closed by `$`. Each plain name is answered; ' +
    'other patterns name no metric (no backend to select from). Given twice: 400.',
  schema: { type: 'string' },
  examples: { node: { value: 'node_cpu_usage|node_memory_total$' } },
};

/** Accepted as the original accepts them, and ignored: there is no data to select, sort or page. */
const ignored = [
  'resources_filter',
  'start',
  'end',
  'step',
  'time',
  'times',
  'sort_metric',
  'sort_type',
  'page',
  'limit',
  'cluster',
].map((name): Parameter => ({
  name,
  in: 'query',
  description: 'Accepted and ignored.',
  schema: { type: 'string' },
}));

function pathParameters(path: string): Parameter[] {
  return [...path.matchAll(/:([A-Za-z]+)/g)].map(([, name]) => ({
    name: name!,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

const errors = {
  '401': statusResponse('No or invalid bearer token.'),
  default: DEFAULT_STATUS_RESPONSE,
};

/** The monitoring API as answered without a metrics backend. */
export function monitoringApi(ctx: ApiContext): ApiDescription {
  const base = `/kapis/monitoring.${ctx.platformName}.io/v1alpha3`;
  const paths: Paths = {};
  /** `/nodes/:node/pods` → `monitoringNodesByNodePods`: unique per path. */
  const operationId = (path: string, prefix: string) =>
    prefix +
    path
      .split('/')
      .filter(Boolean)
      .map((s) => (s.startsWith(':') ? `By${capitalize(s.slice(1))}` : capitalize(s)))
      .join('');
  for (const path of NAMED_METRICS_PATHS) {
    const statistics = path.startsWith('/workspaces') && !path.includes('namespaces');
    const oneWorkspace = path === '/workspaces/:workspace';
    paths[`${base}${openApiPath(path)}`] = {
      get: {
        operationId: operationId(path, 'monitoring'),
        tags: ['monitoring'],
        summary: 'Named metrics: each requested one with the not-configured error',
        security: BEARER,
        parameters: [
          ...pathParameters(path),
          metricsFilter,
          ...(statistics
            ? [
                {
                  name: 'type',
                  in: 'query' as const,
                  description: oneWorkspace
                    ? `\`statistics\`: the workspace's counts (${WORKSPACE_STATISTICS.join(', ')}), real (the devops count says DevOps is not served); only for a caller who may see the workspace (as for the tenant API).`
                    : `\`statistics\`: the workspace counts (${WORKSPACE_STATISTICS.join(', ')}), each with the error (no workspace named).`,
                  schema: { type: 'string' },
                },
              ]
            : []),
          ...ignored,
        ],
        responses: {
          '200': oneWorkspace
            ? jsonResponse(
                'The requested metrics without data, or (`type=statistics`) the workspace’s counts.',
                {
                  anyOf: [schemaRef('UnconfiguredMetrics'), schemaRef('CountMetrics')],
                },
              )
            : jsonResponse('The requested metrics, without data.', schemaRef('UnconfiguredMetrics')),
          '400': statusResponse('`metrics_filter` (or `type`) given more than once.'),
          ...(oneWorkspace
            ? {
                '403': statusResponse('`type=statistics` of a workspace the caller may not see.'),
                '404': statusResponse('`type=statistics` of a workspace that does not exist.'),
              }
            : {}),
          ...errors,
        },
      },
    };
  }
  paths[`${base}/kubesphere`] = {
    get: {
      operationId: 'monitoringCountMetrics',
      tags: ['monitoring'],
      summary:
        'Platform counts: kubesphere_cluser_count (1; the original’s spelling), kubesphere_workspace_count (WorkspaceTemplates), kubesphere_user_count (users)',
      description:
        'Real counts, read from the kube-apiserver (the original takes them from its caches, not from its metrics backend). A type that is not installed counts 0; a count that cannot be read carries an `error` instead of data. No app template count: this server has no app store.',
      security: BEARER,
      responses: { '200': jsonResponse('The counts.', schemaRef('CountMetrics')), ...errors },
    },
  };
  for (const [kind, list] of Object.entries(TARGET_PATHS)) {
    for (const path of list) {
      paths[`${base}${openApiPath(path)}`] = {
        get: {
          operationId: operationId(path, 'monitoring'),
          tags: ['monitoring'],
          summary:
            kind === 'query'
              ? 'An ad hoc query: one metric with the not-configured error'
              : `Target ${kind}: always empty`,
          security: BEARER,
          parameters: pathParameters(path),
          responses: {
            '200':
              kind === 'query'
                ? jsonResponse('No data, and why.', schemaRef('UnconfiguredMetric'))
                : jsonResponse('Nothing known.', {
                    type: 'object',
                    required: ['data'],
                    properties: { data: { type: 'array', maxItems: 0 } },
                  }),
            ...errors,
          },
        },
      };
    }
  }
  return {
    tags: [
      {
        name: 'monitoring',
        description:
          'The original’s monitoring API, answered as it is without a metrics backend (no data, an error per metric).',
      },
    ],
    schemas: {
      UnconfiguredMetric: {
        type: 'object',
        required: ['data', 'error'],
        properties: {
          metric_name: { type: 'string' },
          data: { type: 'object', maxProperties: 0 },
          error: { const: NOT_CONFIGURED },
        },
      },
      CountMetrics: {
        type: 'object',
        required: ['results'],
        properties: {
          results: {
            type: 'array',
            items: {
              oneOf: [
                {
                  type: 'object',
                  required: ['metric_name', 'data'],
                  properties: {
                    metric_name: { type: 'string' },
                    data: {
                      type: 'object',
                      required: ['resultType', 'result'],
                      properties: {
                        resultType: { const: 'vector' },
                        result: {
                          type: 'array',
                          items: {
                            type: 'object',
                            required: ['value'],
                            properties: {
                              value: {
                                type: 'array',
                                prefixItems: [{ type: 'number' }, { type: 'string', pattern: '^\\d+$' }],
                                minItems: 2,
                                maxItems: 2,
                              },
                            },
                          },
                        },
                      },
                    },
                  },
                  not: { required: ['error'] },
                },
                {
                  type: 'object',
                  required: ['metric_name', 'data', 'error'],
                  properties: {
                    metric_name: { type: 'string' },
                    data: { type: 'object', maxProperties: 0 },
                    error: { type: 'string' },
                  },
                },
              ],
            },
          },
        },
      },
      UnconfiguredMetrics: {
        type: 'object',
        required: ['results'],
        properties: {
          results: {
            type: 'array',
            items: { allOf: [schemaRef('UnconfiguredMetric'), { required: ['metric_name'] }] },
          },
        },
      },
    },
    paths,
  };
}
