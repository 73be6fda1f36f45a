import { db } from '../lib/db';
import { KnowledgeDocument } from '../lib/models';
import { systemResolver } from '../lib/outbound/resolve';
import { presentDocument } from '../lib/presenters/knowledge';
import { DOCUMENT_SELECT, type DocumentRow } from '../lib/knowledge/documents';
import { IngestError } from '../lib/ingest/errors';
import { reindexDocument, resyncUrlDocument } from '../lib/knowledge/ingest';

// Operator views and actions on knowledge documents (bin/admin knowledge; docs/knowledge.md
// "Operating"). Operators act across workspaces, so these read by id, not through a reader's reach.

function notFound(id: string): Error {
  return new Error(`no knowledge document ${id}`);
}

export async function listDocuments(opts: { workspaceId: string; projectId?: string; limit: number }) {
  const q = KnowledgeDocument.knexForWorkspace(opts.workspaceId, db(), 'd').select(DOCUMENT_SELECT(db()));
  if (opts.projectId) q.where('d.project_id', opts.projectId);
  const rows = (await q.orderBy('d.created_at', 'desc').limit(opts.limit)) as DocumentRow[];
  return rows.map((r) => ({ ...presentDocument(r), workspaceId: r.workspace_id, ephemeral: r.ephemeral }));
}

export async function inspectDocument(id: string) {
  const row = (await db()('knowledge_documents as d')
    .where('d.id', id)
    .first([...DOCUMENT_SELECT(db()), 'd.content_hash', 'd.job_id', 'd.upload_id'])) as
    (DocumentRow & { content_hash: string; job_id: string | null; upload_id: string | null }) | undefined;
  if (!row) throw notFound(id);
  const chunks = await db()('knowledge_chunks').where({ document_id: id }).count<{ n: string }[]>('* as n');
  return {
    ...presentDocument(row),
    workspaceId: row.workspace_id,
    ephemeral: row.ephemeral,
    regconfig: row.regconfig,
    bodyChars: Number(row.body_chars),
    contentHash: row.content_hash,
    jobId: row.job_id,
    uploadId: row.upload_id,
    indexedChunks: Number(chunks[0]!.n),
  };
}

export async function reindex(id: string) {
  const n = await reindexDocument(db(), id);
  if (n === null) throw notFound(id);
  return { id, chunkCount: n };
}

export async function resync(id: string) {
  try {
    const r = await resyncUrlDocument(db(), id, systemResolver);
    return { id, ...r };
  } catch (err) {
    if (err instanceof IngestError && err.code === 'document_not_found') throw new Error(`no URL knowledge document ${id}`);
    throw err;
  }
}

export async function deleteDocument(id: string) {
  const n = await db()('knowledge_documents').where({ id }).delete();
  if (n === 0) throw notFound(id);
  return { id, deleted: true };
}
