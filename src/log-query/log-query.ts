import { ApiError } from '../kernel/api-error.ts';
import {
  DEFAULT_INTERVAL,
  MAX_BUCKETS,
  bucketCount,
  parseInterval,
  type HistogramInterval,
} from './histogram-interval.ts';
import { TimeParameterError, parseUnixSeconds } from './unix-seconds.ts';

/** The query parameters of `GET /kapis/tenant.<domain>/v1alpha2/logs`, parsed and validated. */

export const OPERATIONS = ['query', 'statistics', 'histogram', 'export'] as const;
export type Operation = (typeof OPERATIONS)[number];
export type SortOrder = 'asc' | 'desc';

/** What selects log records; shared by every operation. Lists are ORed inside, ANDed with each other. */
export interface LogFilter {
  /** Exact namespace names. */
  namespaces: string[];
  /** Substrings of namespace names. */
  namespaceQuery: string[];
  /** Workload names: pods whose names a Deployment, StatefulSet, DaemonSet or Job would generate. */
  workloads: string[];
  /** Prefixes of words in pod names. */
  workloadQuery: string[];
  pods: string[];
  podQuery: string[];
  containers: string[];
  containerQuery: string[];
  /** Prefixes of phrases in the log text (case-insensitive). */
  logQuery: string[];
  /** Inclusive lower bound; undefined means no lower bound. */
  startTimeSeconds: number | undefined;
  /** Inclusive upper bound (the whole second); defaults to the current second. */
  endTimeSeconds: number;
}

export interface LogQuery {
  operation: Operation;
  filter: LogFilter;
  /** query: order of records by time. */
  sort: SortOrder;
  /** query: records skipped. */
  from: number;
  /** query: records returned. */
  size: number;
  /** histogram: bucket width. */
  interval: HistogramInterval;
}

export const DEFAULT_SIZE = 10;
export const MAX_SIZE = 1000;
/** The store's `index.max_result_window`: from + size beyond it is refused by the store. */
export const MAX_RESULT_WINDOW = 10_000;
export const MAX_LIST_ITEMS = 100;

export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export interface ListRule {
  field: keyof Pick<
    LogFilter,
    | 'namespaces'
    | 'namespaceQuery'
    | 'workloads'
    | 'workloadQuery'
    | 'pods'
    | 'podQuery'
    | 'containers'
    | 'containerQuery'
    | 'logQuery'
  >;
  /** Exact names are Kubernetes object names; queries are free text up to a length. */
  pattern?: { regex: RegExp; what: string };
  maxLength: number;
}

/** The list parameters and what each value must be; the OpenAPI document (logs-api.ts) is derived from it. */
export const LIST_PARAMETERS: Readonly<Record<string, ListRule>> = {
  namespaces: { field: 'namespaces', pattern: { regex: DNS_LABEL, what: 'a namespace name' }, maxLength: 63 },
  namespace_query: { field: 'namespaceQuery', maxLength: 253 },
  workloads: {
    field: 'workloads',
    pattern: { regex: DNS_SUBDOMAIN, what: 'a workload name' },
    maxLength: 253,
  },
  workload_query: { field: 'workloadQuery', maxLength: 253 },
  pods: { field: 'pods', pattern: { regex: DNS_SUBDOMAIN, what: 'a pod name' }, maxLength: 253 },
  pod_query: { field: 'podQuery', maxLength: 253 },
  containers: { field: 'containers', pattern: { regex: DNS_LABEL, what: 'a container name' }, maxLength: 63 },
  container_query: { field: 'containerQuery', maxLength: 253 },
  log_query: { field: 'logQuery', maxLength: 1024 },
};

export function badParameter(parameter: string, message: string): ApiError {
  return new ApiError('BadRequest', message, {
    details: { causes: [{ reason: 'FieldValueInvalid', message, field: parameter }] },
  });
}

/** One value per parameter: a parameter given twice is ambiguous. */
function single(params: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const value = params[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badParameter(name, `${name} must be given at most once`);
  return value;
}

function list(params: Readonly<Record<string, unknown>>, name: string, rule: ListRule): string[] {
  const raw = single(params, name);
  if (raw === undefined) return [];
  const items = [...new Set(raw.split(',').map((item) => item.trim()))].filter((item) => item !== '');
  if (items.length > MAX_LIST_ITEMS)
    throw badParameter(name, `${name} lists ${items.length} values; at most ${MAX_LIST_ITEMS} are allowed`);
  for (const item of items) {
    const shown = JSON.stringify(item.length > 40 ? `${item.slice(0, 40)}…` : item);
    if (item.length > rule.maxLength)
      throw badParameter(name, `${name}: ${shown} is longer than ${rule.maxLength} characters`);
    if (rule.pattern && !rule.pattern.regex.test(item))
      throw badParameter(
        name,
        `${name}: ${shown} is not ${rule.pattern.what} (lowercase letters, digits and "-")`,
      );
  }
  return items;
}

function wholeNumber(
  params: Readonly<Record<string, unknown>>,
  name: string,
  fallback: number,
  max: number,
): number {
  const raw = single(params, name);
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]{1,7}$/.test(raw) || Number(raw) > max)
    throw badParameter(
      name,
      `${name} must be a whole number from 0 to ${max}: got ${JSON.stringify(raw.slice(0, 20))}`,
    );
  return Number(raw);
}

function time(params: Readonly<Record<string, unknown>>, name: string): number | undefined {
  try {
    return parseUnixSeconds(name, single(params, name));
  } catch (err) {
    if (err instanceof TimeParameterError) throw badParameter(err.parameter, err.message);
    throw err;
  }
}

/**
 * Parses the query string of a log request. `nowSeconds` is the default end of the time range.
 * Throws a BadRequest ApiError naming the first bad parameter. Unknown parameters are ignored.
 */
export function parseLogQuery(params: Readonly<Record<string, unknown>>, nowSeconds: number): LogQuery {
  const operationRaw = single(params, 'operation') || 'query';
  if (!(OPERATIONS as readonly string[]).includes(operationRaw))
    throw badParameter(
      'operation',
      `operation must be one of ${OPERATIONS.join(', ')}: got ${JSON.stringify(operationRaw.slice(0, 40))}`,
    );
  const operation = operationRaw as Operation;

  const startTimeSeconds = time(params, 'start_time');
  const givenEnd = time(params, 'end_time');
  const endTimeSeconds = givenEnd ?? nowSeconds;
  if (startTimeSeconds !== undefined && endTimeSeconds < startTimeSeconds) {
    throw givenEnd === undefined
      ? badParameter(
          'start_time',
          `start_time (${startTimeSeconds}) is in the future: without end_time the range ends now (${nowSeconds}); both are Unix timestamps in seconds`,
        )
      : badParameter(
          'end_time',
          `end_time (${endTimeSeconds}) is before start_time (${startTimeSeconds}); both are Unix timestamps in seconds`,
        );
  }

  const filter: LogFilter = {
    namespaces: [],
    namespaceQuery: [],
    workloads: [],
    workloadQuery: [],
    pods: [],
    podQuery: [],
    containers: [],
    containerQuery: [],
    logQuery: [],
    startTimeSeconds,
    endTimeSeconds,
  };
  for (const [name, rule] of Object.entries(LIST_PARAMETERS)) filter[rule.field] = list(params, name, rule);

  const sortRaw = single(params, 'sort') || 'desc';
  if (sortRaw !== 'asc' && sortRaw !== 'desc')
    throw badParameter('sort', `sort must be asc or desc: got ${JSON.stringify(sortRaw.slice(0, 20))}`);

  const from = wholeNumber(params, 'from', 0, MAX_RESULT_WINDOW);
  const size = wholeNumber(params, 'size', DEFAULT_SIZE, MAX_SIZE);
  if (from + size > MAX_RESULT_WINDOW)
    throw badParameter(
      'from',
      `from + size must not exceed ${MAX_RESULT_WINDOW} (the store's result window); use operation=export for more records`,
    );

  const interval = parseInterval(single(params, 'interval') || DEFAULT_INTERVAL);
  if (typeof interval === 'string') throw badParameter('interval', interval);
  if (operation === 'histogram' && startTimeSeconds !== undefined) {
    const buckets = bucketCount(interval, startTimeSeconds, endTimeSeconds);
    if (buckets > MAX_BUCKETS)
      throw badParameter(
        'interval',
        `interval ${interval.value} cuts the time range into ${buckets} buckets; at most ${MAX_BUCKETS} are allowed: choose a larger interval or a shorter range`,
      );
  }

  return { operation, filter, sort: sortRaw, from, size, interval };
}
