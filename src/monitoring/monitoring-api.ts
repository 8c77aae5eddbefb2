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
    "A regular expression searched in each of the level's metric names (as the original matches it); absent: every metric. " +
    'Without Prometheus: each plain name of `a|b$` is answered with the not-configured error. Given twice: 400.',
  schema: { type: 'string' },
  examples: { node: { value: 'node_cpu_usage|node_memory_total$' } },
};

const query = (name: string, description: string): Parameter => ({
  name,
  in: 'query',
  description,
  schema: { type: 'string' },
});

/** The original's parameters of the named-metrics routes (see docs/monitoring-api.md). */
const namedParameters: Parameter[] = [
  query('resources_filter', "A regular expression over the level's resource names (`.*` when absent)."),
  query('time', 'Unix seconds of an instant query (now when absent).'),
  query('start', 'Unix seconds: the start of a range query (with `end`).'),
  query('end', 'Unix seconds: the end of a range query (with `start`).'),
  query('step', 'A Go duration (`180s`, `10m`): the spacing of a range (`10m` when absent).'),
  query('sort_metric', 'Ranking (instant queries): the metric to sort by.'),
  query('sort_type', '`asc`, else descending.'),
  query('page', 'The page of the ranking (from 1).'),
  query('limit', 'Rows per page of the ranking (5 when absent).'),
  query('namespaced_resources_filter', '`/pods`: `<namespace>/<pod>|…`, exactly those pods.'),
  query('job', "Ingresses: the ingress controller's scrape job."),
  query('duration', 'Ingresses, with `time`: the range of the rates (a Go duration; `5m` when absent).'),
  query('cluster', 'Accepted and ignored (one cluster).'),
  query('times', 'Accepted and ignored (the console sends it beside `step`).'),
];

const customParameters: Parameter[] = [
  query('expr', "PromQL; on a project's route every selector is confined to the project's namespace."),
  query('metric', '`labelsets`: the series selector (required with `start` and `end`).'),
  ...namedParameters.slice(1, 5),
];

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
        summary:
          'Named metrics, asked of Prometheus (without one: each requested metric with the not-configured error)',
        security: BEARER,
        parameters: [
          ...pathParameters(path),
          metricsFilter,
          ...namedParameters,
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
        ],
        responses: {
          '200': oneWorkspace
            ? jsonResponse(
                'The requested metrics without data, or (`type=statistics`) the workspace’s counts.',
                {
                  anyOf: [schemaRef('UnconfiguredMetrics'), schemaRef('CountMetrics')],
                },
              )
            : jsonResponse('The requested metrics (each with its data or its error).', {
                anyOf: [schemaRef('Metrics'), schemaRef('UnconfiguredMetrics')],
              }),
          '400': statusResponse(
            'A parameter given twice or malformed, a range over `monitoring.maxPointsPerQuery` points, or a project that does not exist.',
          ),
          '403': statusResponse('The caller may not read what these metrics measure.'),
          ...(oneWorkspace
            ? { '404': statusResponse('`type=statistics` of a workspace that does not exist.') }
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
              ? "An ad hoc PromQL query (a project's confined to its namespace)"
              : `Target ${kind} from Prometheus (empty without one)`,
          security: BEARER,
          parameters: [...pathParameters(path), ...customParameters],
          responses: {
            '200':
              kind === 'query'
                ? jsonResponse('One metric: its data, or its error.', {
                    anyOf: [schemaRef('Metric'), schemaRef('UnconfiguredMetric')],
                  })
                : jsonResponse('What Prometheus knows (`null`: nothing).', {
                    type: 'object',
                    required: ['data'],
                    properties: {
                      data: { anyOf: [{ type: 'array', items: { type: 'object' } }, { type: 'null' }] },
                    },
                  }),
            '400': statusResponse(
              'Malformed parameters, or a query that cannot be confined to the namespace.',
            ),
            '403': statusResponse('The caller may not read that scope.'),
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
          'The original’s monitoring API on Prometheus (`monitoring.endpoint`); without one, an error per metric. See docs/monitoring-api.md.',
      },
    ],
    schemas: {
      Metric: {
        type: 'object',
        required: ['data'],
        properties: {
          metric_name: { type: 'string' },
          data: {
            type: 'object',
            properties: {
              resultType: { enum: ['vector', 'matrix'] },
              result: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    metric: { type: 'object', additionalProperties: { type: 'string' } },
                    value: { type: 'array', minItems: 2, maxItems: 2 },
                    values: { type: 'array', items: { type: 'array', minItems: 2, maxItems: 2 } },
                  },
                },
              },
            },
          },
          error: { type: 'string' },
        },
      },
      Metrics: {
        type: 'object',
        required: ['results'],
        properties: {
          results: { type: 'array', items: schemaRef('Metric') },
          page: { type: 'integer' },
          total_page: { type: 'integer' },
          total_item: { type: 'integer' },
        },
      },
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
