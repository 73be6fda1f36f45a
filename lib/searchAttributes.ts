import { defineSearchAttributeKey, type SearchAttributeType } from '@temporalio/common';
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';

// The custom search attributes, declared once (pure: no Node, no config), so an operator finds
// any post's, job's or endpoint's workflow in the UI by its API id. Clients set them through
// these typed keys; the dev server's `--search-attribute` flags (tooling/temporalBinary.ts) and the
// worker's registration on an external server (workers/worker.ts) derive from this table.
export const SEARCH = {
  workspace: defineSearchAttributeKey('WorkspaceId', 'KEYWORD'),
  project: defineSearchAttributeKey('ProjectId', 'KEYWORD'),
  post: defineSearchAttributeKey('PostId', 'KEYWORD'),
  job: defineSearchAttributeKey('JobId', 'KEYWORD'),
  endpoint: defineSearchAttributeKey('EndpointId', 'KEYWORD'),
} as const;

export const SEARCH_ATTRIBUTE_KEYS: ReadonlyArray<SearchAttributeKey<SearchAttributeType>> = Object.values(SEARCH);

/** The type names of the `temporal` CLI's `--search-attribute Name=Type` flag. */
const CLI_TYPE_NAMES: Record<SearchAttributeType, string> = {
  TEXT: 'Text',
  KEYWORD: 'Keyword',
  INT: 'Int',
  DOUBLE: 'Double',
  BOOL: 'Bool',
  DATETIME: 'Datetime',
  KEYWORD_LIST: 'KeywordList',
};

/** `Name=Type` for each declared key, the dev server's `--search-attribute` values. */
export function searchAttributeFlags(): string[] {
  return SEARCH_ATTRIBUTE_KEYS.map((k) => `${k.name}=${CLI_TYPE_NAMES[k.type]}`);
}

/** The operator API's IndexedValueType numbers (temporal.api.enums.v1), for AddSearchAttributes. */
const INDEXED_VALUE_TYPES: Record<SearchAttributeType, number> = {
  TEXT: 1,
  KEYWORD: 2,
  INT: 3,
  DOUBLE: 4,
  BOOL: 5,
  DATETIME: 6,
  KEYWORD_LIST: 7,
};

/** `{ name: IndexedValueType }` for each declared key, the AddSearchAttributes request body. */
export function searchAttributeIndexedTypes(): Record<string, number> {
  return Object.fromEntries(SEARCH_ATTRIBUTE_KEYS.map((k) => [k.name, INDEXED_VALUE_TYPES[k.type]]));
}
