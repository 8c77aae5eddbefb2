import type { Parameter } from '../http/openapi-components.ts';

/** `page` and `limit` are at most 15 digits (list-query.ts). */
const MAX_PAGE_NUMBER = 999_999_999_999_999;

/** The spellings Go's strconv.ParseBool accepts, as the original parses `ascending`. */
const BOOLEAN_SPELLINGS = ['true', 'false', '1', '0', 't', 'f', 'T', 'F', 'TRUE', 'FALSE', 'True', 'False'];

/**
 * `page`, `limit` and `ascending` of the v1alpha3 list query, the same on every list that uses
 * src/list-query/: `items` names what a page holds, `ascending` says what the default order means there.
 */
export function pagingParameters(items: string, ascending: string): Parameter[] {
  return [
    {
      name: 'page',
      in: 'query',
      description: '1-based page number (at most 15 digits); ignored without `limit`.',
      schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_NUMBER, default: 1 },
    },
    {
      name: 'limit',
      in: 'query',
      description: `Page size (at most 15 digits); default and \`-1\`: all ${items}. \`0\` and other negatives are rejected.`,
      schema: { type: 'integer', minimum: -1, maximum: MAX_PAGE_NUMBER, not: { const: 0 } },
    },
    {
      name: 'ascending',
      in: 'query',
      description: ascending,
      schema: { type: 'string', enum: BOOLEAN_SPELLINGS, default: 'false' },
    },
  ];
}
