import type { Parameter } from '../http/openapi-components.ts';
import { LABEL_SELECTOR_PATTERN } from './label-selector.ts';

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

/**
 * The v1alpha3 list query of objects filtered by their metadata (metadata-page.ts): paging, `sortBy`
 * and the metadata filters. `items` names what a page holds.
 */
export function metadataListParameters(items: string): Parameter[] {
  const text = (name: string, description: string, extra: Record<string, unknown> = {}): Parameter => ({
    name,
    in: 'query',
    description,
    schema: { type: 'string', ...extra },
  });
  return [
    ...pagingParameters(items, 'Default `false`: newest (or last by name) first.'),
    text(
      'sortBy',
      'Creation time (the default; `createTime` and update time are the same) or `name`; ties by name.',
      {
        enum: ['name', 'creationTimestamp', 'createTime', 'lastUpdateTimestamp', 'updateTime'],
        default: 'creationTimestamp',
      },
    ),
    text('name', 'Substring of the name.'),
    text('names', 'Exact names, comma-separated.'),
    text('uid', 'Exact `metadata.uid`.'),
    text('labelSelector', 'Kubernetes label selector over the labels.', { pattern: LABEL_SELECTOR_PATTERN }),
    text('label', 'Like `labelSelector`; both must hold.', { pattern: LABEL_SELECTOR_PATTERN }),
    text('annotation', 'A selector over the annotations (`key` alone: the annotation is set).', {
      pattern: LABEL_SELECTOR_PATTERN,
    }),
    text('alias', 'Substring of the `<platform>.io/alias-name` annotation.'),
  ];
}
