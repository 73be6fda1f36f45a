import type { Knex } from 'knex';
import { config } from '../config';
import { db, readPrepared, shapedRead } from '../db';
import { KnowledgeChunk, KnowledgeDocument as KnowledgeDocumentModel, reachParams, reachShape, reachValues } from '../models';
import type { Reach } from '../models/scoped';
import { SEARCH_CONFIGS } from './language';
import { chunkText } from './text';

// Knowledge documents in Postgres (spec 2.10; docs/knowledge.md): rows, chunks with their
// tsvector, visibility, ranked search and grounding retrieval.

export const KNOWLEDGE_TYPES = ['text', 'file', 'url', 'youtube'] as const;
export type KnowledgeType = (typeof KNOWLEDGE_TYPES)[number];
export const KNOWLEDGE_SCOPES = ['PROJECT', 'WORKSPACE'] as const;
export type KnowledgeScope = (typeof KNOWLEDGE_SCOPES)[number];

export interface DocumentRow {
  id: string;
  workspace_id: string;
  project_id: string | null;
  scope: KnowledgeScope;
  type: KnowledgeType;
  name: string;
  status: string;
  tags: string[];
  source_name: string | null;
  source_url: string | null;
  language: string | null;
  regconfig: string;
  folder_id: string | null;
  chunk_count: number;
  ephemeral: boolean;
  last_synced_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** left(body, 2001): enough for the preview, never the whole body. */
  head: string;
  body_chars: number;
}

/** Every column a KnowledgeDocument needs; the body itself never leaves the database whole. */
export const DOCUMENT_COLUMNS = [
  'd.id',
  'd.workspace_id',
  'd.project_id',
  'd.scope',
  'd.type',
  'd.name',
  'd.status',
  'd.tags',
  'd.source_name',
  'd.source_url',
  'd.language',
  'd.regconfig',
  'd.folder_id',
  'd.chunk_count',
  'd.ephemeral',
  'd.last_synced_at',
  'd.created_at',
  'd.updated_at',
];
export const DOCUMENT_SELECT = (k: Knex) => [
  ...DOCUMENT_COLUMNS,
  k.raw('left(d.body, 2001) as head'),
  k.raw('char_length(d.body) as body_chars'),
];

/**
 * The documents a reader may see (spec 4.5): its workspace's, without ephemeral chat uploads;
 * a plain member sees workspace-wide documents and those of its assigned projects.
 */
export function visibleDocuments(k: Knex, reach: Reach): Knex.QueryBuilder {
  const q = KnowledgeDocumentModel.knexForWorkspace(reach.workspaceId, k, 'd').where('d.ephemeral', false);
  const assigned = reach.projectIds;
  if (assigned) q.where((w) => w.where('d.scope', 'WORKSPACE').orWhereIn('d.project_id', [...assigned]));
  return q;
}

/** (Re)writes a document's chunks and their tsvectors in its configuration; answers the chunk count. */
export async function writeChunks(
  trx: Knex | Knex.Transaction,
  doc: { id: string; workspace_id: string; regconfig: string },
  body: string,
): Promise<number> {
  await trx('knowledge_chunks').where({ document_id: doc.id }).delete();
  const chunks = chunkText(body, config.knowledge.chunkChars);
  if (chunks.length === 0) return 0;
  await trx.raw(
    `insert into knowledge_chunks (document_id, workspace_id, ordinal, content, tsv)
     select ?, ?, u.o, u.c, to_tsvector(?::regconfig, u.c) from unnest(?::int[], ?::text[]) as u(o, c)`,
    [doc.id, doc.workspace_id, doc.regconfig, chunks.map((_, i) => i), chunks],
  );
  return chunks.length;
}

/**
 * The tsquery of a search, parsed in each text-search configuration the workspace's documents
 * are indexed in and OR-ed, so one constant expression matches English stems, French stems and
 * plain words alike (and can use the GIN index). With `terms`, the words are OR-ed instead of
 * all required (websearch syntax `a or b`).
 */
export function tsqueryExpr(k: Knex, text: string, configs: readonly string[]): Knex.Raw {
  const list = configs.length ? configs : ['simple'];
  return k.raw(
    list.map(() => 'websearch_to_tsquery(?::regconfig, ?)').join(' || '),
    list.flatMap((c) => [c, text]),
  );
}

/**
 * The configurations a workspace's documents are indexed in (usually one or two). Read on every
 * search and every grounded generation as a prepared statement, on the knex or the transaction
 * the caller hands it.
 */
export async function workspaceConfigs(k: Knex, workspaceId: string): Promise<string[]> {
  const [row] = await readPrepared<{ regconfigs: string[] }>(workspaceConfigsRead(null, { workspaceId }), { on: k });
  return searchConfigsOf(row!.regconfigs);
}

/** workspaceConfigs' read, compiled once (lib/db.ts `shapedRead`): its text is the same for every workspace. */
const workspaceConfigsRead = shapedRead((_shape: null, param: (name: 'workspaceId') => string) =>
  db().raw(`select ${workspaceRegconfigsSql('?')} as regconfigs`, [param('workspaceId')]),
);

/** The text-search configurations among a workspace's documents' `regconfig` values, in order. */
export function searchConfigsOf(regconfigs: readonly string[]): string[] {
  return [...new Set(regconfigs)].filter((c) => SEARCH_CONFIGS.includes(c)).sort();
}

/** SEARCH_CONFIGS as a SQL array literal (constants of ours: safe to inline). */
const SEARCH_CONFIGS_SQL = `array[${SEARCH_CONFIGS.map((c) => `'${c.replace(/'/g, "''")}'`).join(', ')}]::text[]`;

/**
 * The SQL of an expression answering the search configurations among the workspace's
 * documents' `regconfig` values as a text array (`regconfigs`), for a caller that reads them in
 * a statement it runs anyway; `workspaceIdSql` names the workspace id in that statement.
 * retrieveKnowledge takes the result as `regconfigs` and skips its own read. One probe of the
 * (workspace_id, regconfig) index per configuration, not a pass over the workspace's documents:
 * the cost stays flat as the corpus grows (bench/README.md, knowledge).
 */
export function workspaceRegconfigsSql(workspaceIdSql: string): string {
  return `array(select c from unnest(${SEARCH_CONFIGS_SQL}) c where exists (select from knowledge_documents d where d.workspace_id = ${workspaceIdSql} and d.regconfig = c))`;
}

/** A search hit: the document's row (lib/presenters/knowledge.ts presents it), its rank and passage. */
export interface SearchHit {
  document: DocumentRow;
  rank: number;
  snippet: string;
}

/**
 * Documents ranked by their best-matching chunk (ts_rank_cd), with that chunk's highlighted
 * passage (ts_headline, computed for the page only). `projectId` narrows to that project's and
 * workspace-wide documents. Read as a prepared statement on the knex or the transaction the
 * caller hands it.
 */
export async function searchDocuments(
  k: Knex,
  reach: Reach,
  opts: { query: string; projectId?: string; limit: number; offset: number },
): Promise<{ hits: SearchHit[]; hasMore: boolean }> {
  const configs = await workspaceConfigs(k, reach.workspaceId);
  if (configs.length === 0) return { hits: [], hasMore: false };
  const all = await readPrepared<DocumentRow & { rank: number; snippet: string }>(
    searchRead(
      { configs: configs.length, projectId: opts.projectId !== undefined, reach: reachShape(reach), limit: opts.limit },
      Object.assign(reachValues(reach), { configs, query: opts.query, projectId: opts.projectId, offset: opts.offset }),
    ),
    // Planned with its values: how many chunks match decides the plan, and a generic plan of it
    // read far more (lib/db.ts readPrepared).
    { on: k, planEach: true },
  );
  const page = all.slice(0, opts.limit);
  return {
    hits: page.map((r) => ({ document: r, rank: Number(r.rank), snippet: r.snippet })),
    hasMore: all.length > opts.limit,
  };
}

type SearchParam = 'workspaceId' | 'projectIds' | 'configs' | 'query' | 'projectId' | 'offset';

/**
 * searchDocuments' statement, compiled once per shape (lib/db.ts `shapedRead`): how many
 * configurations the query is parsed in, whether `projectId` narrows, how many projects the
 * reader is narrowed to (null: every one) and the page size, whose values are few. The offset is
 * a value: knex's `offset` takes numbers only, so it is written after the hits' query.
 */
const searchRead = shapedRead(
  (
    shape: { configs: number; projectId: boolean; reach: number | null; limit: number },
    param: (name: SearchParam, index?: number) => string,
  ) => {
    const k = db();
    const visible = visibleDocuments(k, reachParams(shape.reach, param)).select('d.id');
    if (shape.projectId) visible.where((w) => w.where('d.scope', 'WORKSPACE').orWhere('d.project_id', param('projectId')));
    const configs = Array.from({ length: shape.configs }, (_, i) => param('configs', i));
    const tsq = tsqueryExpr(k, param('query'), configs).toSQL();
    // The workspace's chunks (the model's scoped query) matching the query, each ranked once: the
    // rank is most of a search's cost and grows with the matches, and the planner would inline a
    // plain subquery and rank every chunk twice (for the best rank and for the best chunk).
    const matches = KnowledgeChunk.knexForWorkspace(param('workspaceId'), k, 'c')
      .select('c.document_id', 'c.id', 'c.ordinal', k.raw('ts_rank_cd(c.tsv, q.tsq) as r'))
      .crossJoin(k.raw('q'))
      .whereRaw('c.tsv @@ q.tsq')
      .whereIn('c.document_id', visible)
      .toSQL();
    // The best rank per document, with its best chunk.
    const hits = k
      .from('matches as m')
      .select('m.document_id', k.raw('max(m.r) as rank'), k.raw('(array_agg(m.id order by m.r desc, m.ordinal))[1] as best_chunk_id'))
      .groupBy('m.document_id')
      .orderByRaw('rank desc, m.document_id desc')
      .limit(shape.limit + 1)
      .toSQL();
    return k.raw(
      `with q as materialized (select (${tsq.sql}) as tsq),
            matches as materialized (${matches.sql}),
            hits as (${hits.sql} offset ?)
       select ${DOCUMENT_COLUMNS.join(', ')}, left(d.body, 2001) as head, char_length(d.body) as body_chars, h.rank,
              -- The best-ranked matching chunk, known from the ranking itself: searching the page's
              -- documents again had Postgres intersect each with the text-search index's matches
              -- over the whole database (bench/README.md, reads).
              (select ts_headline(d.regconfig::regconfig, c.content, q.tsq,
                                  'StartSel=**, StopSel=**, MaxWords=40, MinWords=15, MaxFragments=2, FragmentDelimiter=" … "')
                 from knowledge_chunks c
                where c.id = h.best_chunk_id) as snippet
         from hits h join knowledge_documents d on d.id = h.document_id, q
        order by h.rank desc, d.id desc`,
      [...tsq.bindings, ...matches.bindings, ...hits.bindings, param('offset')],
    );
  },
);

/** A passage handed to the writer: a knowledge chunk, or an extra block such as a named source. */
export interface KnowledgeBlock {
  documentId: string | null;
  title: string;
  text: string;
}

const GROUNDING_STOP = new Set(
  'about above after again also been before being below between both could does doing down during each from further have having here into itself just more most once only other over same should some such than that their them then there these they this those through under until very were what when where which while will with would your yours write post posts please make tone keep'.split(
    ' ',
  ),
);

/** Up to `max` distinctive words of a text, most frequent first (ties by first appearance). */
export function queryTerms(text: string, max = 24): string[] {
  const counts = new Map<string, number>();
  for (const w of text
    .slice(0, 50_000)
    .toLowerCase()
    .match(/[\p{L}\p{N}]{4,}/gu) ?? []) {
    if (GROUNDING_STOP.has(w)) continue;
    counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, max)
    .map(([w]) => w);
}

/** The characters a token budget buys for the writer (about four a token). */
export function charsForTokens(tokens: number): number {
  return Math.max(0, tokens) * 4;
}

/**
 * Grounding (docs/knowledge.md "Grounding"): the chunks of a project's and its workspace's
 * knowledge most relevant to `text`, best first, packed into a token budget (about four
 * characters a token). `extra` blocks (a named source, for instance) come first and count
 * against the same budget. Deterministic: ties break on document and chunk order.
 */
export async function retrieveKnowledge(
  k: Knex,
  opts: {
    workspaceId: string;
    projectId: string | null;
    text: string;
    tokenBudget: number;
    extra?: KnowledgeBlock[];
    maxChunks?: number;
    /** The workspace's documents' regconfig values when the caller read them (workspaceRegconfigsSql). */
    regconfigs?: readonly string[];
  },
): Promise<{ blocks: KnowledgeBlock[]; documentIds: string[] }> {
  let budget = charsForTokens(opts.tokenBudget);
  const blocks: KnowledgeBlock[] = [];
  for (const b of opts.extra ?? []) {
    if (budget <= 0) break;
    const text = b.text.slice(0, budget);
    blocks.push({ ...b, text });
    budget -= text.length;
  }
  const terms = queryTerms(opts.text);
  const configs =
    terms.length === 0 || budget <= 0
      ? []
      : opts.regconfigs
        ? searchConfigsOf(opts.regconfigs)
        : await workspaceConfigs(k, opts.workspaceId);
  if (configs.length > 0) {
    const tsq = tsqueryExpr(k, terms.join(' or '), configs);
    // The workspace's chunks (the model's scoped query) of its own and the project's documents.
    const passages = KnowledgeChunk.knexForWorkspace(opts.workspaceId, k, 'c')
      .select('c.document_id', 'c.ordinal', 'c.content', 'd.name', k.raw('ts_rank_cd(c.tsv, q.tsq) as rank'))
      .join('knowledge_documents as d', 'd.id', 'c.document_id')
      .crossJoin(k.raw('q'))
      .whereRaw('c.tsv @@ q.tsq')
      .where('d.ephemeral', false)
      .where((w) => w.where('d.scope', 'WORKSPACE').orWhere('d.project_id', opts.projectId))
      .orderByRaw('rank desc, c.document_id, c.ordinal')
      .limit(opts.maxChunks ?? 12)
      .toSQL();
    const rows = await k.raw(`with q as (select (${tsq.toSQL().sql}) as tsq) ${passages.sql}`, [
      ...tsq.toSQL().bindings,
      ...passages.bindings,
    ]);
    for (const r of rows.rows as Array<{ document_id: string; content: string; name: string }>) {
      if (budget < 80) break;
      const text = r.content.length <= budget ? r.content : `${r.content.slice(0, budget).replace(/\s+\S*$/, '')}…`;
      blocks.push({ documentId: r.document_id, title: r.name, text });
      budget -= text.length;
    }
  }
  const documentIds = [...new Set(blocks.map((b) => b.documentId).filter((id): id is string => id !== null))];
  return { blocks, documentIds };
}
