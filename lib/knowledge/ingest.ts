import type { Knex } from 'knex';
import { config } from '../config';
import { newId } from '../ids';
import type { ObjectStore } from '../storage/objectStore';
import { guardedFetch, type GuardedFetchOptions } from '../outbound/guardedFetch';
import type { Resolver } from '../outbound/resolve';
import { extractArticle } from './article';
import { writeChunks, type KnowledgeScope, type KnowledgeType } from './documents';
import { fileText } from './fileText';
import { IngestError } from '../ingest/errors';
import { guessLanguage } from '../ingest/language';
import { regconfigFor } from './language';
import { contentHash, normalizeText } from './text';
import type { TranscriptClient } from './youtube';
import { Upload } from '../models';

// The ingest of one knowledge job (docs/knowledge.md): read the source into text, then store the
// document and its chunks. Reading may fail for good (an unknown video, a refused address, a
// file that is not text) or for now (a timeout): the error's `retryable` says which.

/** What a KNOWLEDGE_INGEST job row keeps of the request. */
export interface KnowledgeJobInput {
  type: KnowledgeType;
  scope: KnowledgeScope;
  projectId: string | null;
  name?: string;
  tags: string[];
  folderId?: string;
  language?: string;
  text?: string;
  uploadId?: string;
  url?: string;
  videoId?: string;
}

export interface SourceText {
  text: string;
  name: string;
  sourceName: string | null;
  sourceUrl: string | null;
  language: string | null;
  /** What reading it cost (a recording's transcription), in cents; absent when no paid model ran. */
  costCents?: number;
}

export interface IngestDeps {
  store: () => ObjectStore;
  transcripts: TranscriptClient;
  resolve: Resolver;
}

export function urlFetchOptions(resolve: Resolver): GuardedFetchOptions {
  return {
    allowLoopback: config.knowledge.allowLoopback,
    allowOrigins: config.knowledge.fetchAllowOrigins,
    allowHttp: config.knowledge.allowHttp,
    timeoutMs: config.knowledge.fetchTimeoutMs,
    maxBytes: config.knowledge.fetchMaxBytes,
    maxRedirects: config.knowledge.maxRedirects,
    resolve,
  };
}

/** The readable text of a URL through the SSRF guard. */
export async function readUrl(url: string, resolve: Resolver): Promise<SourceText> {
  const page = await guardedFetch(url, urlFetchOptions(resolve));
  const article = extractArticle(page.body, page.contentType);
  const host = new URL(page.url).hostname;
  return {
    text: article.text,
    name: article.title ?? host,
    sourceName: article.siteName ?? host,
    sourceUrl: url,
    language: article.language,
  };
}

export async function readSource(
  k: Knex,
  workspaceId: string,
  input: KnowledgeJobInput,
  deps: IngestDeps,
  signal?: AbortSignal,
): Promise<SourceText> {
  switch (input.type) {
    case 'text':
      return { text: input.text ?? '', name: input.name ?? firstLine(input.text ?? ''), sourceName: null, sourceUrl: null, language: null };
    case 'file': {
      const upload = await Upload.forWorkspace(workspaceId, k)
        .where({ id: input.uploadId })
        .first()
        .select('object_key', 'content_type', 'file_name');
      if (!upload) throw new IngestError('upload_not_found', `Upload ${input.uploadId} no longer exists.`);
      const bytes = await deps.store().get(upload.object_key);
      if (!bytes) throw new IngestError('upload_without_object', `Upload ${input.uploadId} has no stored file.`);
      const extracted = await fileText({ bytes, mimeType: upload.content_type, filename: upload.file_name });
      return {
        text: extracted.text,
        name: input.name ?? upload.file_name,
        sourceName: upload.file_name,
        sourceUrl: null,
        language: extracted.language,
        costCents: extracted.costCents,
      };
    }
    case 'url':
      return readUrl(input.url!, deps.resolve);
    case 'youtube': {
      const t = await deps.transcripts.fetch(input.videoId!, signal);
      return {
        text: t.text,
        name: input.name ?? t.title,
        sourceName: t.channel ?? 'YouTube',
        sourceUrl: `https://www.youtube.com/watch?v=${t.videoId}`,
        language: t.language,
      };
    }
  }
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim()) ?? 'Untitled';
  const t = line.replace(/\s+/g, ' ').trim();
  return t.length > 80 ? `${t.slice(0, 79)}…` : t;
}

/** The body a document keeps, or the reason there is none. */
export function prepareBody(raw: string): string {
  const body = normalizeText(raw);
  if (!body) throw new IngestError('empty_document', 'The source has no readable text.');
  if (body.length > config.knowledge.maxTextChars)
    throw new IngestError(
      'document_too_large',
      `The text is ${body.length} characters, over the ${config.knowledge.maxTextChars}-character limit.`,
    );
  return body;
}

/**
 * Stores the job's document and its chunks in one transaction. Keyed by the job: a retried
 * activity finds the document its earlier attempt wrote and answers it again.
 */
export async function storeDocument(
  k: Knex,
  job: { id: string; workspace_id: string },
  input: KnowledgeJobInput,
  source: SourceText,
): Promise<{ documentId: string; chunkCount: number }> {
  const body = prepareBody(source.text);
  const language = input.language ?? source.language?.slice(0, 16) ?? guessLanguage(body);
  return k.transaction(async (trx) => {
    const existing = await trx('knowledge_documents').where({ job_id: job.id }).first('id', 'chunk_count');
    if (existing) return { documentId: existing.id, chunkCount: existing.chunk_count };
    const doc = {
      id: newId('knowledge'),
      workspace_id: job.workspace_id,
      regconfig: regconfigFor(language),
    };
    await trx('knowledge_documents').insert({
      ...doc,
      project_id: input.scope === 'PROJECT' ? input.projectId : null,
      scope: input.scope,
      type: input.type,
      name: (input.name ?? source.name).slice(0, 300) || 'Untitled',
      status: 'Success',
      tags: JSON.stringify(input.tags),
      source_name: source.sourceName?.slice(0, 300) ?? null,
      source_url: source.sourceUrl,
      language: language ?? null,
      folder_id: input.folderId ?? null,
      body,
      content_hash: contentHash(body),
      upload_id: input.uploadId ?? null,
      job_id: job.id,
      last_synced_at: input.type === 'url' ? trx.fn.now() : null,
    });
    const chunkCount = await writeChunks(trx, doc, body);
    await trx('knowledge_documents').where({ id: doc.id }).update({ chunk_count: chunkCount });
    return { documentId: doc.id, chunkCount };
  });
}

/**
 * Re-fetches a URL document: lastSyncedAt moves on every successful fetch; the body and chunks
 * are rewritten only when the content hash changed. Answers whether it re-indexed.
 */
export async function resyncUrlDocument(k: Knex, documentId: string, resolve: Resolver): Promise<{ changed: boolean; chunkCount: number }> {
  const doc = await k('knowledge_documents')
    .where({ id: documentId, type: 'url' })
    .first('id', 'workspace_id', 'source_url', 'content_hash', 'regconfig', 'chunk_count');
  if (!doc) throw new IngestError('document_not_found', `No URL document ${documentId}.`);
  const source = await readUrl(doc.source_url, resolve);
  const body = prepareBody(source.text);
  const hash = contentHash(body);
  return k.transaction(async (trx) => {
    if (hash === doc.content_hash) {
      await trx('knowledge_documents').where({ id: doc.id }).update({ last_synced_at: trx.fn.now() });
      return { changed: false, chunkCount: doc.chunk_count };
    }
    const chunkCount = await writeChunks(trx, doc, body);
    await trx('knowledge_documents')
      .where({ id: doc.id })
      .update({ body, content_hash: hash, chunk_count: chunkCount, last_synced_at: trx.fn.now(), updated_at: trx.fn.now() });
    return { changed: true, chunkCount };
  });
}

/** Rewrites a document's chunks from its stored body (operators: bin/admin knowledge reindex). */
export async function reindexDocument(k: Knex, documentId: string): Promise<number | null> {
  return k.transaction(async (trx) => {
    const doc = await trx('knowledge_documents').where({ id: documentId }).forUpdate().first('id', 'workspace_id', 'regconfig', 'body');
    if (!doc) return null;
    const n = await writeChunks(trx, doc, doc.body);
    await trx('knowledge_documents').where({ id: doc.id }).update({ chunk_count: n, updated_at: trx.fn.now() });
    return n;
  });
}
