import { z } from 'zod';
import type { DocumentRow } from '../knowledge/documents';
import { previewOf } from '../knowledge/text';
import { dateTime, nullableDateTime, objectComponent } from './output';

// spec 2.10 (docs/knowledge.md): the knowledge document, and a search hit.

export const knowledgeDocumentSchema = objectComponent('KnowledgeDocument', {
  id: z.string().describe('kb_*'),
  scope: z.enum(['PROJECT', 'WORKSPACE']),
  name: z.string(),
  status: z.string(),
  tags: z.array(z.string()),
  createdAt: dateTime,
  chunkCount: z.number().int(),
  textPreview: z.string().max(2000),
  textPreviewTruncated: z.boolean(),
  hasFullText: z.boolean(),
  projectId: z.string().nullable(),
  type: z.enum(['text', 'file', 'url', 'youtube']),
  sourceName: z.string().nullable(),
  sourceUrl: z.string().nullable(),
  language: z.string().nullable(),
  folderId: z.string().nullable(),
  lastSyncedAt: nullableDateTime,
});

/** A search hit: the document, its rank and the best passage with matches between `**`. */
export const knowledgeHitSchema = knowledgeDocumentSchema.extend({ rank: z.number().optional(), snippet: z.string().optional() }).strict();

export type KnowledgeDocument = z.infer<typeof knowledgeDocumentSchema>;

/** spec 2.10. */
export function presentDocument(row: DocumentRow): KnowledgeDocument {
  const { preview: textPreview, previewTruncated: textPreviewTruncated } = previewOf(row.head);
  return {
    id: row.id,
    scope: row.scope,
    name: row.name,
    status: row.status,
    tags: row.tags ?? [],
    createdAt: row.created_at.toISOString(),
    chunkCount: row.chunk_count,
    textPreview,
    textPreviewTruncated,
    hasFullText: Number(row.body_chars) > 0,
    projectId: row.project_id,
    type: row.type,
    sourceName: row.source_name,
    sourceUrl: row.source_url,
    language: row.language,
    folderId: row.folder_id,
    lastSyncedAt: row.last_synced_at?.toISOString() ?? null,
  };
}
