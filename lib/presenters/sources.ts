import { z } from 'zod';
import { previewOf, type SourceRow } from '../sources/sources';
import { dateTime, objectComponent } from './output';

// spec 2.11 Source (docs/sources.md "Fields"): a preview of the text; `topics` and `hooks` appear
// once the status is `Success`.

export const sourceSchema = objectComponent('Source', {
  id: z.string().describe('src_*'),
  projectId: z.string(),
  type: z.enum(['text', 'file']),
  name: z.string(),
  fileName: z.string().nullable(),
  mimeType: z.string().nullable(),
  bytes: z.number().int().nullable(),
  status: z.enum(['Processing', 'Success', 'Failed']),
  preview: z.string().describe('the first 2,000 characters of the text; the full text is never returned'),
  previewTruncated: z.boolean(),
  textLength: z.number().int().describe('characters of the whole text'),
  language: z.string().nullable(),
  durationSeconds: z.number().nullable().describe('recordings only'),
  topics: z.array(z.string()).optional().describe('present once status is Success'),
  hooks: z.array(z.string()).optional().describe('present once status is Success'),
  jobId: z.string().nullable().describe('the latest SOURCE_INGEST job of a file source'),
  errorCode: z.string().nullable(),
  createdAt: dateTime,
  updatedAt: dateTime,
});

export type Source = z.infer<typeof sourceSchema>;

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
