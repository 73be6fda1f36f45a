import { createHash } from 'node:crypto';
import { base64DecodedLength, decodeStrictBase64 } from '../base64';
import { config } from '../config';
import { db } from '../db';
import { errors } from '../errors';
import { ID_PREFIX } from '../ids';
import { normalizeContentType } from '../media/images';
import type { UploadPurpose } from '../media/uploads';
import { objectStore, type ObjectStore } from '../storage/objectStore';

// spec 4.9 inline file input on the agent transport (`create_source_file`,
// `add_to_knowledge_base`): `content_base64` (no `data:` prefix), `mimeType` and `filename`, at
// most 25 MB decoded (spec 8). The bytes are stored as an upload whose object key and `upl_` id
// derive from the SHA-256 of the content (and the workspace and purpose), so a retried call
// lands on the same handle and the ingest worker, which de-duplicates by uploadId, processes the
// file once.

export interface InlineFile {
  workspaceId: string;
  projectId: string | null;
  purpose: Extract<UploadPurpose, 'source' | 'knowledge'>;
  content_base64: string;
  mimeType: string;
  filename: string;
}

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** 24 base62 characters from a digest: the shape of every other id (lib/ids.ts). */
function base62Of(digest: Buffer, length = 24): string {
  let n = BigInt(`0x${digest.toString('hex')}`);
  let out = '';
  while (out.length < length) {
    out += ALPHABET[Number(n % 62n)];
    n /= 62n;
  }
  return out;
}

export function inlineUploadId(workspaceId: string, purpose: string, sha256: string): string {
  return `${ID_PREFIX.upload}_${base62Of(createHash('sha256').update(`${workspaceId}\n${purpose}\n${sha256}`).digest())}`;
}

export function inlineObjectKey(workspaceId: string, purpose: string, sha256: string): string {
  return `${workspaceId}/uploads/inline/${purpose}/${sha256}`;
}

/** The decoded bytes, or invalid_request / payload_too_large (nothing is stored on a refusal). */
export function decodeInlineFile(b64: string, maxBytes: number = config.media.mcpInlineMaxBytes): Buffer {
  if (b64.startsWith('data:'))
    throw errors.invalidRequest('`content_base64` is plain base64, without a `data:` prefix.', { field: 'content_base64' });
  const size = base64DecodedLength(b64);
  if (size > maxBytes) {
    throw errors.payloadTooLarge(
      `The inline file is ${size} bytes; at most ${maxBytes} bytes are accepted inline. Use create_upload_url and \`uploadId\` for larger files.`,
      { limit: maxBytes, actual: size },
    );
  }
  const bytes = decodeStrictBase64(b64);
  if (!bytes) throw errors.invalidRequest('`content_base64` is not valid base64.', { field: 'content_base64' });
  return bytes;
}

/** Stores the inline file (once per content) and returns its `upl_` handle id. */
export async function storeInlineFile(input: InlineFile, store: ObjectStore = objectStore()): Promise<string> {
  const bytes = decodeInlineFile(input.content_base64);
  const sha = createHash('sha256').update(bytes).digest('hex');
  const id = inlineUploadId(input.workspaceId, input.purpose, sha);
  const key = inlineObjectKey(input.workspaceId, input.purpose, sha);
  const contentType = normalizeContentType(input.mimeType);
  // The object first: a handle row never names an object that is not there.
  if (!(await store.head(key))) await store.put(key, bytes, contentType, sha);
  const expiresAt = new Date(Date.now() + config.uploads.handleTtlSeconds * 1000);
  await db()('uploads')
    .insert({
      id,
      workspace_id: input.workspaceId,
      project_id: input.projectId,
      purpose: input.purpose,
      file_name: input.filename.slice(0, config.media.fileNameChars),
      content_type: contentType,
      bytes: bytes.length,
      object_key: key,
      expires_at: expiresAt,
    })
    .onConflict('id')
    // A retry keeps the handle alive; what it names (the content) cannot have changed.
    .merge({ expires_at: expiresAt });
  return id;
}
