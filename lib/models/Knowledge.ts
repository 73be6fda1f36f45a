import { WorkspaceScopedModel } from './scoped';

/**
 * A knowledge document (spec 2.10; docs/knowledge.md). Its visibility is not the plain
 * `visibleTo`: a plain member also sees the workspace-wide ones (lib/knowledge/documents.ts).
 */
export class KnowledgeDocument extends WorkspaceScopedModel {
  static tableName = 'knowledge_documents';

  declare id: string;
  declare workspace_id: string;
  declare project_id: string | null;
  declare scope: string;
  declare type: string;
  declare name: string;
  declare status: string;
  declare tags: string[];
  declare source_name: string | null;
  declare source_url: string | null;
  declare language: string | null;
  declare regconfig: string;
  declare folder_id: string | null;
  declare body: string;
  declare content_hash: string;
  declare chunk_count: number;
  declare ephemeral: boolean;
  declare upload_id: string | null;
  declare job_id: string | null;
  declare last_synced_at: Date | null;
  declare created_at: Date;
  declare updated_at: Date;
}

/** A passage of a knowledge document with its tsvector; searched per workspace. */
export class KnowledgeChunk extends WorkspaceScopedModel {
  static tableName = 'knowledge_chunks';
  static projectColumn = null;

  declare id: string;
  declare document_id: string;
  declare workspace_id: string;
  declare ordinal: number;
  declare content: string;
}
