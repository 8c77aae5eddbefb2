import {
  BEARER,
  DEFAULT_STATUS_RESPONSE,
  response,
  schemaRef,
  statusResponse,
  type ApiContext,
  type ApiDescription,
  type Parameter,
} from '../http/openapi-components.ts';
import { DEFAULT_INTERVAL, MAX_BUCKETS } from './histogram-interval.ts';
import {
  DEFAULT_SIZE,
  DNS_SUBDOMAIN,
  LIST_PARAMETERS,
  MAX_LIST_ITEMS,
  MAX_RESULT_WINDOW,
  MAX_SIZE,
} from './log-query.ts';
import { MAX_UNIX_SECONDS } from './unix-seconds.ts';

const retryAfter = {
  'Retry-After': { description: 'Seconds.', schema: { type: 'string', pattern: '^\\d+$' } },
};

/**
 * A comma-separated list parameter, described as parseLogQuery enforces it: values trimmed, empty and
 * repeated ones dropped, at most MAX_LIST_ITEMS left, each within its rule's length and (exact names) pattern.
 */
const list = (name: string, description: string): Parameter => {
  const rule = LIST_PARAMETERS[name]!;
  const each = rule.pattern
    ? `each ${rule.pattern.what}: lowercase letters, digits and \`-\`${rule.pattern.regex === DNS_SUBDOMAIN ? ' and `.`' : ''}, starting and ending with a letter or digit, at most ${rule.maxLength} characters`
    : `each at most ${rule.maxLength} characters`;
  // Exact names: the whole list as a pattern (values may be padded with spaces and empty).
  const item = rule.pattern ? rule.pattern.regex.source.replace(/^\^|\$$/g, '') : undefined;
  return {
    name,
    in: 'query',
    description:
      `${description} Comma-separated, ORed; different parameters are ANDed. Values are trimmed, empty and repeated ones ` +
      `dropped; at most ${MAX_LIST_ITEMS} values, ${each}. Otherwise a 400 naming the parameter.`,
    schema: {
      type: 'string',
      ...(item ? { pattern: `^\\s*(?:${item})?\\s*(?:,\\s*(?:${item})?\\s*)*$` } : {}),
    },
  };
};

const unixSeconds = (name: string, description: string): Parameter => ({
  name,
  in: 'query',
  description: `${description} Integer Unix timestamp in **seconds**; milliseconds, fractions, negative numbers and anything else are a 400 naming the parameter.`,
  schema: { type: 'integer', minimum: 0, maximum: MAX_UNIX_SECONDS },
});

const parameters: Parameter[] = [
  {
    name: 'operation',
    in: 'query',
    description:
      '`query`: records; `statistics`: counts; `histogram`: counts per time bucket; `export`: every matching line as a text attachment.',
    schema: { type: 'string', enum: ['query', 'statistics', 'histogram', 'export'], default: 'query' },
  },
  list('namespaces', 'Exact namespace names. Without it, the caller needs get pods/log cluster-wide.'),
  list('namespace_query', 'Substrings of namespace names (case-sensitive).'),
  list('workloads', 'Workload names: pods a Deployment, StatefulSet, DaemonSet or Job of that name creates.'),
  list('workload_query', 'Prefixes of words in pod names (case-insensitive).'),
  list('pods', 'Exact pod names.'),
  list('pod_query', 'Prefixes of words in pod names (case-insensitive).'),
  list('containers', 'Exact container names.'),
  list('container_query', 'Prefixes of words in container names (case-insensitive).'),
  list('log_query', 'Phrase prefixes in the log text (case-insensitive).'),
  unixSeconds('start_time', 'Inclusive lower bound; absent: no lower bound.'),
  unixSeconds('end_time', 'Inclusive upper bound (the whole second); absent: now. Not before start_time.'),
  {
    name: 'interval',
    in: 'query',
    description: `histogram: bucket width, a whole number and s, m, h or d, or 1w, 1M, 1q, 1y. At most ${MAX_BUCKETS} buckets over a bounded range.`,
    schema: { type: 'string', pattern: '^([1-9][0-9]{0,5}[smhd]|1[wMqy])$', default: DEFAULT_INTERVAL },
  },
  {
    name: 'sort',
    in: 'query',
    description:
      'query and export: order by record time; records sharing a timestamp in the order the store indexed them (same direction), so pages never overlap or skip.',
    schema: { type: 'string', enum: ['asc', 'desc'], default: 'desc' },
  },
  {
    name: 'from',
    in: 'query',
    description: `query: records to skip; from + size ≤ ${MAX_RESULT_WINDOW}.`,
    schema: { type: 'integer', minimum: 0, maximum: MAX_RESULT_WINDOW, default: 0 },
  },
  {
    name: 'size',
    in: 'query',
    description: 'query: records to return.',
    schema: { type: 'integer', minimum: 0, maximum: MAX_SIZE, default: DEFAULT_SIZE },
  },
];

/** GET /kapis/tenant.<platform>.io/v1alpha2/logs: container logs from the log store. */
export function logsApi(ctx: ApiContext): ApiDescription {
  const path = `/kapis/tenant.${ctx.platformName}.io/v1alpha2/logs`;
  const count = { type: 'integer', minimum: 0 };
  return {
    tags: [{ name: 'logging', description: 'Container logs collected into Elasticsearch/OpenSearch.' }],
    schemas: {
      LogQueryResult: {
        type: 'object',
        required: ['query'],
        properties: {
          query: {
            type: 'object',
            required: ['total', 'records'],
            properties: {
              total: { ...count, description: 'Matching records (before from/size).' },
              records: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    log: {
                      type: 'string',
                      description: 'The line as collected, usually ending in a newline.',
                    },
                    time: { type: 'string', description: 'Record time as the container runtime wrote it.' },
                    namespace: { type: 'string' },
                    pod: { type: 'string' },
                    container: { type: 'string' },
                  },
                  additionalProperties: false,
                },
              },
            },
            additionalProperties: false,
          },
        },
        additionalProperties: false,
      },
      LogStatisticsResult: {
        type: 'object',
        required: ['statistics'],
        properties: {
          statistics: {
            type: 'object',
            required: ['containers', 'logs'],
            properties: {
              containers: { ...count, description: 'Distinct containers among the matching records.' },
              logs: { ...count, description: 'Matching records.' },
            },
            additionalProperties: false,
          },
        },
        additionalProperties: false,
      },
      LogHistogramResult: {
        type: 'object',
        required: ['histogram'],
        properties: {
          histogram: {
            type: 'object',
            required: ['total', 'histograms'],
            properties: {
              total: count,
              histograms: {
                type: 'array',
                description:
                  'From the first to the last non-empty bucket; empty buckets between them included.',
                items: {
                  type: 'object',
                  required: ['time', 'count'],
                  properties: {
                    time: { type: 'integer', description: 'Bucket start, Unix epoch milliseconds.' },
                    count,
                  },
                  additionalProperties: false,
                },
              },
            },
            additionalProperties: false,
          },
        },
        additionalProperties: false,
      },
    },
    paths: {
      [path]: {
        get: {
          operationId: 'queryLogs',
          tags: ['logging'],
          summary: 'Query, count, histogram or export container logs',
          description:
            `Needs Kubernetes RBAC permission to get pods/log in every namespace named (or cluster-wide without namespaces). ` +
            `The former logging.${ctx.platformName}.io API group (workspace, namespace, workload and pod log endpoints, ` +
            'log-setting API) was removed: every path under it answers 404 pointing here.',
          security: BEARER,
          parameters,
          responses: {
            '200': response('Query, statistics or histogram as JSON; export as a streamed text attachment.', {
              headers: {
                'Content-Disposition': {
                  description: 'export only: `attachment`.',
                  schema: { const: 'attachment' },
                },
              },
              content: {
                'application/json': {
                  schema: {
                    oneOf: [
                      schemaRef('LogQueryResult'),
                      schemaRef('LogStatisticsResult'),
                      schemaRef('LogHistogramResult'),
                    ],
                  },
                },
                'text/plain': {
                  schema: {
                    type: 'string',
                    description:
                      'export: the log lines, colour codes removed, one per line, at most logging.exportMaxLines.',
                  },
                },
              },
            }),
            '400': statusResponse(
              'A parameter is malformed, repeated or out of range; the message and `details.causes[0].field` name it.',
            ),
            '401': statusResponse('No or invalid bearer token.'),
            '403': statusResponse(
              'RBAC does not allow get pods/log in a namespace the query touches; the message names it.',
            ),
            '502': statusResponse('The log store refused the query or our credentials.'),
            '503': statusResponse(
              'Logging is not configured, the log store is unreachable or did not answer in time, or authorization cannot be decided.',
              retryAfter,
            ),
            default: DEFAULT_STATUS_RESPONSE,
          },
        },
      },
    },
  };
}
