import { ApiError } from '../kernel/api-error.ts';
import { EVERYTHING, LabelSelectorError, parseLabelSelector, type LabelSelector } from './label-selector.ts';

/**
 * The v1alpha3 list query, compatible with the system we re-create (`page`, `limit`, `sortBy`,
 * `ascending`, `name`, `labelSelector`, plus a resource-specific `status`) but stricter: a malformed
 * value of a known parameter is a 400 naming it, where the original silently fell back to a default.
 * Unknown parameters are ignored.
 */
export type SortBy = 'name' | 'creationTimestamp';

export interface ListQuery<Status extends string = string> {
  /** 1-based page number; ignored when there is no limit. */
  page: number;
  /** Page size; undefined means all items. */
  limit: number | undefined;
  sortBy: SortBy;
  ascending: boolean;
  /** Case-sensitive substring of the name; undefined means no name filter. */
  name: string | undefined;
  labelSelector: LabelSelector;
  status: Status | undefined;
  /** Canonical text of the query: equal for queries that select the same page. */
  canonical: string;
}

export type RawQuery = Readonly<Record<string, unknown>>;

export interface ListQueryOptions<Status extends string> {
  /** Values `status` accepts; without them `status` is an unknown (ignored) parameter. */
  statuses?: readonly Status[];
}

const SORT_KEYS: Record<string, SortBy> = {
  name: 'name',
  creationTimestamp: 'creationTimestamp',
  // The original accepts both spellings for creation time.
  createTime: 'creationTimestamp',
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
    const key = Object.hasOwn(SORT_KEYS, sortText) ? SORT_KEYS[sortText] : undefined;
    if (!key) throw invalid('sortBy', sortText, 'must be one of name, creationTimestamp, createTime');
    sortBy = key;
  }

  const ascendingText = single(query, 'ascending');
  let ascending = false;
  if (ascendingText !== undefined) {
    const value = Object.hasOwn(BOOLEANS, ascendingText) ? BOOLEANS[ascendingText] : undefined;
    if (value === undefined) throw invalid('ascending', ascendingText, 'must be true or false');
    ascending = value;
  }

  const nameText = single(query, 'name');
  const name = nameText === undefined || nameText === '' ? undefined : nameText;

  const selectorText = single(query, 'labelSelector');
  let labelSelector = EVERYTHING;
  if (selectorText !== undefined) {
    try {
      labelSelector = parseLabelSelector(selectorText);
    } catch (err) {
      if (err instanceof LabelSelectorError) throw invalid('labelSelector', selectorText, err.message);
      throw err;
    }
  }

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

  const canonical = JSON.stringify([
    limit === undefined ? 1 : page,
    limit ?? -1,
    sortBy,
    ascending,
    name ?? null,
    labelSelector.requirements,
    status ?? null,
  ]);
  return { page, limit, sortBy, ascending, name, labelSelector, status, canonical };
}
