import type { Knex } from 'knex';
import { config } from '../config';
import { db } from '../db';
import { errors } from '../errors';
import { newId } from '../ids';
import { objectStore, type ObjectStore } from '../storage/objectStore';
import { normalizeContentType } from './images';
import { Upload } from '../models';

// spec 4.5 POST /v1/uploads and the `upl_` handle. A handle is usable while it has not expired
// and its object exists in the store; anything else is `422 unprocessable` wherever the handle
// is used (spec 7.2 "upload handle without object").

export const UPLOAD_PURPOSES = ['source', 'knowledge', 'media'] as const;
export type UploadPurpose = (typeof UPLOAD_PURPOSES)[number];

type SizeClass = keyof typeof config.uploads.maxBytes;

/** Which kinds of file each purpose takes (docs/media.md, "Uploads"). */
const PURPOSE_CLASSES: Record<UploadPurpose, readonly SizeClass[]> = {
  media: ['image'],
  // Sources read documents and text as well as recordings (docs/sources.md).
  source: ['audio', 'video', 'document', 'text'],
  knowledge: ['document', 'text'],
};
const DOCUMENT_TYPES = new Set([
  'application/pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/msword',
  'application/rtf',
]);
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

export function sizeClassOf(contentType: string): SizeClass | null {
  const t = normalizeContentType(contentType);
  if (IMAGE_TYPES.has(t)) return 'image';
  if (t.startsWith('audio/')) return 'audio';
  if (t.startsWith('video/')) return 'video';
  if (t.startsWith('text/')) return 'text';
  if (DOCUMENT_TYPES.has(t)) return 'document';
  return null;
}

export interface UploadRow {
  id: string;
  workspace_id: string;
  project_id: string | null;
  purpose: UploadPurpose;
  file_name: string;
  content_type: string;
  bytes: string | number;
  object_key: string;
  expires_at: Date;
  created_at: Date;
}

export function uploadObjectKey(workspaceId: string, uploadId: string): string {
  return `${workspaceId}/uploads/${uploadId}`;
}

/**
 * Checks the declared file against the purpose and the per-type cap, then records the handle and
 * mints the URL. Every refusal happens before a URL exists.
 */
export async function mintUpload(
  input: {
    workspaceId: string;
    projectId: string | null;
    purpose: UploadPurpose;
    fileName: string;
    contentType: string;
    bytes: number;
  },
  store: ObjectStore = objectStore(),
) {
  const contentType = normalizeContentType(input.contentType);
  const sizeClass = sizeClassOf(contentType);
  const allowed = PURPOSE_CLASSES[input.purpose];
  if (!sizeClass || !allowed.includes(sizeClass)) {
    throw errors.unprocessable(
      `\`contentType\` ${contentType} is not accepted for purpose ${input.purpose} (accepted: ${allowed.join(', ')} files).`,
      { contentType, purpose: input.purpose },
    );
  }
  const cap = config.uploads.maxBytes[sizeClass];
  if (input.bytes > cap) {
    throw errors.payloadTooLarge(`\`bytes\` ${input.bytes} is over the ${cap}-byte limit for ${sizeClass} files.`, {
      limit: cap,
      contentType,
    });
  }
  const id = newId('upload');
  const key = uploadObjectKey(input.workspaceId, id);
  const expiresAt = new Date(Date.now() + config.uploads.handleTtlSeconds * 1000);
  const urlTtl = Math.min(config.uploads.urlTtlSeconds, config.uploads.handleTtlSeconds);
  const signed = await store.presignPut({ key, contentType, bytes: input.bytes, expiresInSeconds: urlTtl });
  await db()('uploads').insert({
    id,
    workspace_id: input.workspaceId,
    project_id: input.projectId,
    purpose: input.purpose,
    file_name: input.fileName,
    content_type: contentType,
    bytes: input.bytes,
    object_key: key,
    expires_at: expiresAt,
  });
  return {
    id,
    purpose: input.purpose,
    fileName: input.fileName,
    contentType,
    bytes: input.bytes,
    projectId: input.projectId,
    method: 'PUT' as const,
    url: signed.url,
    headers: signed.headers,
    urlExpiresAt: signed.expiresAt.toISOString(),
    expiresAt: expiresAt.toISOString(),
  };
}

/**
 * The handle's row, or 422 when the handle is unknown to this workspace, expired, or minted for
 * another purpose than the caller's. An id from another workspace reads as unknown (rule 1:
 * nothing leaks). Whether its object was PUT is the caller's next question: `usableUpload` asks
 * the store for its head, a caller that reads the bytes anyway asks with its GET and answers a
 * missing object with `uploadWithoutObject`.
 */
export async function uploadRow(
  workspaceId: string,
  uploadId: string,
  purpose: UploadPurpose,
  trx: Knex | Knex.Transaction = db(),
): Promise<UploadRow> {
  const row = (await Upload.forWorkspace(workspaceId, trx).findById(uploadId)) as UploadRow | undefined;
  if (!row) throw errors.unprocessable(`Upload ${uploadId} does not exist in this workspace.`, { uploadId, reason: 'unknown_upload' });
  if (row.expires_at.getTime() <= Date.now())
    throw errors.unprocessable(`Upload ${uploadId} has expired; mint a new one with POST /v1/uploads.`, {
      uploadId,
      reason: 'upload_expired',
    });
  if (row.purpose !== purpose)
    throw errors.unprocessable(`Upload ${uploadId} was minted for purpose ${row.purpose}; this takes an upload with purpose ${purpose}.`, {
      uploadId,
      reason: 'wrong_purpose',
      purpose: row.purpose,
      expected: purpose,
    });
  return row;
}

/** spec 7.2 "upload handle without object": 422. */
export function uploadWithoutObject(uploadId: string) {
  return errors.unprocessable(`Upload ${uploadId} has no object: PUT the bytes to its signed URL first.`, {
    uploadId,
    reason: 'upload_without_object',
  });
}

/** The handle and its stored object, or 422 when the handle is unknown, expired, of another purpose, or was never PUT. */
export async function usableUpload(
  workspaceId: string,
  uploadId: string,
  purpose: UploadPurpose,
  trx: Knex | Knex.Transaction = db(),
  store: ObjectStore = objectStore(),
) {
  const row = await uploadRow(workspaceId, uploadId, purpose, trx);
  const stored = await store.head(row.object_key);
  if (!stored) throw uploadWithoutObject(uploadId);
  return { row, stored };
}
