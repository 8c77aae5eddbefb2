import { ApiError } from '../kernel/api-error.ts';
import { EVERYTHING, LabelSelectorError, parseLabelSelector, type LabelSelector } from './label-selector.ts';

/**
 * The v1alpha3 list query, compatible with the system we re-create (`page`, `limit`, `sortBy`,
 * `ascending`, `name`, `names`, `uid`, `labelSelector`, `label`, `annotation`, `alias`, plus a
 * resource-specific `status`) but stricter: a malformed value of a known parameter is a 400 naming
 * it, where the original silently fell back to a default (or matched nothing). Unknown parameters
 * are ignored.
 */
export type SortBy = 'name' | 'creationTimestamp' | 'lastUpdateTimestamp' | 'startTime';

export interface ListQuery<Status extends string = string> {
  /** 1-based page number; ignored when there is no limit. */
  readonly page: number;
  /** Page size; undefined means all items. */
  readonly limit: number | undefined;
  readonly sortBy: SortBy;
  readonly ascending: boolean;
  /** Case-sensitive substring of the name; undefined means no name filter. */
  readonly name: string | undefined;
  readonly labelSelector: LabelSelector;
  /** Exact names (`names=a,b`); undefined means no filter. */
  readonly names: ReadonlySet<string> | undefined;
  /** Exact `metadata.uid`; undefined means no filter. */
  readonly uid: string | undefined;
  /** `label=`: a selector matched against labels (the same as `labelSelector`, both must hold). */
  readonly label: LabelSelector;
  /** `annotation=`: a selector matched against annotations. */
  readonly annotation: LabelSelector;
  /** Case-sensitive substring of the `<platform>.io/alias-name` annotation. */
  readonly alias: string | undefined;
  readonly status: Status | undefined;
  /** The kind's own filter parameters that were given (`options.filters`), by name. */
  readonly filters: ReadonlyMap<string, string>;
  /** Canonical text of the query: equal for queries that select the same page. */
  readonly canonical: string;
}

export type RawQuery = Readonly<Record<string, unknown>>;

export interface ListQueryOptions<Status extends string> {
  /** Values `status` accepts; without them `status` is an unknown (ignored) parameter. */
  statuses?: readonly Status[];
  /** Sort keys of this kind beyond the common ones (pods: `startTime`). */
  extraSorts?: readonly SortBy[];
  /**
   * The kind's own filter parameters (pods: `nodeName`, …): name → the values it accepts, or
   * undefined for any text. Given ones land in `filters`; an empty value means no filter.
   */
  filters?: Readonly<Record<string, readonly string[] | undefined>>;
}

const SORT_KEYS: Record<string, SortBy> = {
  name: 'name',
  creationTimestamp: 'creationTimestamp',
  // The original accepts both spellings for creation time, and for update time.
  createTime: 'creationTimestamp',
  lastUpdateTimestamp: 'lastUpdateTimestamp',
  updateTime: 'lastUpdateTimestamp',
};

/** The values strconv.ParseBool accepts, which is what the original parses `ascending` with. */
const BOOLEANS: Record<string, boolean> = {
  '1': true,
  t: true,
  T: true,
  true: true,
  TRUE: true,
  True: true,
  '0': false,
  f: false,
  F: false,
  false: false,
  FALSE: false,
  False: false,
};

const POSITIVE_INTEGER = /^[1-9]\d{0,14}$/;

function invalid(parameter: string, value: string, expected: string): ApiError {
  const message = `invalid value for query parameter "${parameter}": ${JSON.stringify(value)}: ${expected}`;
  return new ApiError('BadRequest', message, {
    details: { causes: [{ reason: 'FieldValueInvalid', message, field: parameter }] },
  });
}

/** One value of a parameter, or undefined when absent. A parameter given twice is ambiguous: 400. */
function single(query: RawQuery, parameter: string): string | undefined {
  const value = query[parameter];
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  const message = `query parameter "${parameter}" must be given at most once`;
  throw new ApiError('BadRequest', message, {
    details: { causes: [{ reason: 'FieldValueDuplicate', message, field: parameter }] },
  });
}

/** Longer query strings are parsed every time: the cache's memory stays small whatever clients send. */
const MAX_KEPT_QUERY_LENGTH = 512;

/**
 * The list queries of one route, parsed once per query string. Clients poll the same few queries (a
 * console's page, a script's filter), and Express parses the query string again at each read of
 * `req.query`. A parsed query is shared by the requests that sent its text, so it is read-only. Only valid
 * queries are kept; a full cache is emptied, since any entry is cheap to make again.
 */
export class ListQueryParser<Status extends string = never> {
  readonly #options: ListQueryOptions<Status>;
  readonly #maxEntries: number;
  readonly #parsed = new Map<string, ListQuery<Status>>();

  constructor(options: ListQueryOptions<Status> = {}, maxEntries = 256) {
    this.#options = options;
    this.#maxEntries = maxEntries;
  }

  /** The query of a request whose URL is `url`; `raw()` gives its parameters when they must be parsed. */
  parse(url: string, raw: () => RawQuery): ListQuery<Status> {
    const mark = url.indexOf('?');
    const text = mark < 0 ? '' : url.slice(mark + 1);
    const known = this.#parsed.get(text);
    if (known) return known;
    const query = Object.freeze(parseListQuery(raw(), this.#options));
    if (text.length <= MAX_KEPT_QUERY_LENGTH) {
      if (this.#parsed.size >= this.#maxEntries) this.#parsed.clear();
      this.#parsed.set(text, query);
    }
    return query;
  }
}

export function parseListQuery<Status extends string = never>(
  query: RawQuery,
  options: ListQueryOptions<Status> = {},
): ListQuery<Status> {
  const pageText = single(query, 'page');
  let page = 1;
  if (pageText !== undefined) {
    if (!POSITIVE_INTEGER.test(pageText)) throw invalid('page', pageText, 'must be an integer ≥ 1');
    page = Number(pageText);
  }

  const limitText = single(query, 'limit');
  let limit: number | undefined;
  if (limitText !== undefined && limitText !== '-1') {
    if (!POSITIVE_INTEGER.test(limitText)) {
      throw invalid('limit', limitText, 'must be an integer ≥ 1, or -1 for all items');
    }
    limit = Number(limitText);
  }

  const sortText = single(query, 'sortBy');
  let sortBy: SortBy = 'creationTimestamp';
  if (sortText !== undefined) {
    const extra = options.extraSorts ?? [];
    const key = Object.hasOwn(SORT_KEYS, sortText)
      ? SORT_KEYS[sortText]
      : (extra as readonly string[]).includes(sortText)
        ? (sortText as SortBy)
        : undefined;
    if (!key) {
      const accepted = [...Object.keys(SORT_KEYS), ...extra].join(', ');
      throw invalid('sortBy', sortText, `must be one of ${accepted}`);
    }
    sortBy = key;
  }

  const ascendingText = single(query, 'ascending');
  let ascending = false;
  if (ascendingText !== undefined) {
    const value = Object.hasOwn(BOOLEANS, ascendingText) ? BOOLEANS[ascendingText] : undefined;
    if (value === undefined) throw invalid('ascending', ascendingText, 'must be true or false');
    ascending = value;
  }

  const name = nonEmpty(single(query, 'name'));

  const labelSelector = selector(query, 'labelSelector');
  const label = selector(query, 'label');
  const annotation = selector(query, 'annotation');

  const namesText = single(query, 'names');
  const nameList = namesText === undefined || namesText === '' ? [] : namesText.split(',');
  const names = nameList.length > 0 ? new Set(nameList) : undefined;
  const uid = nonEmpty(single(query, 'uid'));
  const alias = nonEmpty(single(query, 'alias'));

  let status: Status | undefined;
  if (options.statuses) {
    const statusText = single(query, 'status');
    if (statusText !== undefined) {
      if (!(options.statuses as readonly string[]).includes(statusText)) {
        throw invalid('status', statusText, `must be one of ${options.statuses.join(', ')}`);
      }
      status = statusText as Status;
    }
  }

  const filters = new Map<string, string>();
  for (const [parameter, accepted] of Object.entries(options.filters ?? {})) {
    const text = nonEmpty(single(query, parameter));
    if (text === undefined) continue;
    if (accepted && !accepted.includes(text)) {
      throw invalid(parameter, text, `must be one of ${accepted.join(', ')}`);
    }
    filters.set(parameter, text);
  }

  const canonical = JSON.stringify([
    limit === undefined ? 1 : page,
    limit ?? -1,
    sortBy,
    ascending,
    name ?? null,
    labelSelector.requirements,
    names ? [...names].sort() : null,
    uid ?? null,
    label.requirements,
    annotation.requirements,
    alias ?? null,
    status ?? null,
    // Only kinds with filters of their own add them, so the other kinds' ETags stay as they were.
    ...(filters.size > 0 ? [[...filters].sort(([a], [b]) => (a < b ? -1 : 1))] : []),
  ]);
  return {
    page,
    limit,
    sortBy,
    ascending,
    name,
    labelSelector,
    names,
    uid,
    label,
    annotation,
    alias,
    status,
    filters,
    canonical,
  };
}

/** An empty value means no filter, as for `name`. */
function nonEmpty(text: string | undefined): string | undefined {
  return text === undefined || text === '' ? undefined : text;
}

/** A selector parameter (`labelSelector`, `label`, `annotation`); malformed: 400 naming it. */
function selector(query: RawQuery, parameter: string): LabelSelector {
  const text = single(query, parameter);
  if (text === undefined) return EVERYTHING;
  try {
    return parseLabelSelector(text);
  } catch (err) {
    if (err instanceof LabelSelectorError) throw invalid(parameter, text, err.message);
    throw err;
  }
}
