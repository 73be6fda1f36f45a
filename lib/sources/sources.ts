import type { ModelObject } from 'objection';
import { config } from '../config';
import { previewOf as cutPreview } from '../knowledge/text';
import { Source as SourceModel } from '../models';
import type { Source } from '../../api/operations/sources/schema';

// spec 2.11 Source (docs/sources.md "Fields"). The record the API returns is a preview of the
// text; `topics` and `hooks` appear once the status is `Success`.

export const SOURCE_STATUSES = ['Processing', 'Success', 'Failed'] as const;
export type SourceStatus = (typeof SOURCE_STATUSES)[number];
export const SOURCE_TYPES = ['text', 'file'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

/** A `sources` row, as the model declares it. */
export type SourceRow = ModelObject<SourceModel>;

/** The job input of a SOURCE_INGEST job: which source to fill from which upload. */
export interface SourceIngestInput {
  sourceId: string;
  uploadId: string;
}

export function previewOf(text: string | null): { preview: string; previewTruncated: boolean } {
  return cutPreview(text ?? '', config.sources.previewChars);
}

export function presentSource(row: SourceRow): Source {
  const { preview, previewTruncated } = previewOf(row.text);
  return {
    id: row.id,
    projectId: row.project_id,
    type: row.type,
    name: row.name,
    fileName: row.file_name,
    mimeType: row.mime_type,
    bytes: row.bytes === null ? null : Number(row.bytes),
    status: row.status,
    preview,
    previewTruncated,
    textLength: row.text?.length ?? 0,
    language: row.language,
    durationSeconds: row.duration_seconds,
    ...(row.status === 'Success' ? { topics: row.topics ?? [], hooks: row.hooks ?? [] } : {}),
    jobId: row.job_id,
    errorCode: row.error_code,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
export type { Source };
