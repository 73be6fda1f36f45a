import { base64DecodedLength, decodeStrictBase64 } from '../../../lib/base64';
import { config } from '../../../lib/config';
import { readPrepared, shapedRead, TIMESTAMPS_AS_ISO, type WithIsoInstants } from '../../../lib/db';
import { ApiError, errors } from '../../../lib/errors';
import { importAsset, sha256Hex, type AssetRow } from '../../../lib/media/assets';
import { presentAsset } from '../../../lib/presenters/media';
import { MediaAsset } from '../../../lib/models';
import { imageTypeFromFileName, isAcceptedImageType, normalizeContentType, ACCEPTED_IMAGE_TYPES } from '../../../lib/media/images';
import { uploadRow, uploadWithoutObject } from '../../../lib/media/uploads';
import { defineOperation, depsOf } from '../../operation';
import { page, single } from '../../output';
import { keysetClauses, keysetPage, parseLimit } from '../../pagination';
import type { CursorPosition } from '../../../lib/tokens';
import { checkProjectFilter, resolveProjectOrDefault } from '../projects/resolve';
import { getMediaInput, importMediaInput, listMediaInput, mediaAssetSchema } from './schema';

// spec 2.13 / 4.7: the media library. Import (POST /v1/media; the spec leaves the path open),
// list and get. Reads need media:read; the import is a write on the library whose purpose is
// posts, so it needs posts:write (docs/media.md, "The own-image import"). Client-role accounts are refused
// everything here (spec 5.4: media reads and every write).

function decodeInline(b64: string): Buffer {
  if (b64.startsWith('data:')) throw errors.unprocessable('`content_base64` is plain base64, without a `data:` prefix.');
  const size = base64DecodedLength(b64);
  // spec 8: inline image about 3 MB decoded.
  if (size > config.media.inlineMaxBytes) {
    throw errors.payloadTooLarge(
      `The inline image is ${size} bytes; at most ${config.media.inlineMaxBytes} bytes are accepted inline. Use POST /v1/uploads and \`uploadId\` for larger files.`,
      { limit: config.media.inlineMaxBytes, actual: size },
    );
  }
  const bytes = decodeStrictBase64(b64);
  if (!bytes) throw errors.unprocessable('`content_base64` is not valid base64.');
  return bytes;
}

/** The type the inline caller declares: `mimeType`, else what `fileName` implies (spec 4.7), else none. */
function declaredInlineType(mimeType: string | undefined, fileName: string | undefined): string | null {
  if (mimeType !== undefined) {
    const t = normalizeContentType(mimeType);
    if (!isAcceptedImageType(t))
      throw errors.unprocessable(`\`mimeType\` ${t} is not an accepted image type (${ACCEPTED_IMAGE_TYPES.join(', ')}).`, { mimeType: t });
    return t;
  }
  return fileName !== undefined ? imageTypeFromFileName(fileName) : null;
}

/**
 * The request body edge of POST /v1/media (spec 4.7: larger bodies get a bare HTTP 413 before
 * JSON parsing): the base64 of the inline maximum plus room for the other fields.
 */
export const IMPORT_BODY_LIMIT_BYTES = Math.ceil(config.media.inlineMaxBytes / 3) * 4 + 16 * 1024;

export const importMedia = defineOperation({
  name: 'media.import',
  summary:
    'Own-image import: inline base64 or a PUT upload becomes a media-library asset (an existing asset with the same bytes is returned).',
  kind: 'write',
  scopes: { allOf: ['posts:write'] },
  clientRole: 'deny',
  input: importMediaInput,
  output: single(mediaAssetSchema),
  // docs/media.md "Storage limits": 402 like the weekly AI budget.
  errors: ['usage_limit_exceeded'],
  handler: async (ctx, input) => {
    const { auth } = ctx;
    const store = depsOf(ctx).objectStore;
    // spec 4.7: `projectId` is optional only for an OAuth principal with a pinned default project.
    const projectId = (await resolveProjectOrDefault(auth, input.projectId)).id;
    let bytes: Buffer;
    let declaredType: string | null;
    let fileName = input.fileName ?? null;
    if (input.content_base64 !== undefined) {
      declaredType = declaredInlineType(input.mimeType, input.fileName);
      bytes = decodeInline(input.content_base64);
      if (input.sha256 !== undefined) {
        const actual = sha256Hex(bytes);
        if (actual !== input.sha256.toLowerCase()) {
          throw errors.unprocessable(
            `sha256 mismatch: the request declares ${input.sha256.toLowerCase()} but the decoded bytes hash to ${actual}.`,
            { declared: input.sha256.toLowerCase(), actual },
          );
        }
      }
    } else {
      const row = await uploadRow(auth.workspaceId, input.uploadId!, 'media');
      // The GET answers whether the object was PUT; no HEAD before it.
      const got = await store.get(row.object_key);
      if (!got) throw uploadWithoutObject(row.id);
      bytes = got;
      // spec 4.7: on the upload path the stored content type (bound into the signature) wins.
      declaredType = row.content_type;
      fileName ??= row.file_name;
    }
    const { asset } = await importAsset(
      {
        workspaceId: auth.workspaceId,
        projectId,
        bytes,
        declaredType,
        fileName,
        alt: input.alt,
        title: input.title,
        uploadId: input.uploadId ?? null,
      },
      store,
    );
    return { data: presentAsset(asset) };
  },
});

/** The media list's page (GET /v1/media), by shape: whether a project filters it, whether a cursor positions it, the page size. */
const mediaPage = shapedRead(
  (
    shape: { project: boolean; cursor: boolean; limit: number },
    param: (name: 'workspaceId' | 'projectId' | 'cursorCreatedAt' | 'cursorId') => string,
  ) => {
    const q = MediaAsset.forWorkspace(param('workspaceId')).toKnexQuery();
    if (shape.project) q.where('media_assets.project_id', param('projectId'));
    const pos = shape.cursor ? { createdAt: param('cursorCreatedAt'), id: param('cursorId') } : null;
    return keysetClauses(q, pos, shape.limit, 'media_assets');
  },
);

export const listMedia = defineOperation({
  name: 'media.list',
  summary: 'The media library, newest first, cursor-paginated.',
  kind: 'read',
  scopes: { allOf: ['media:read'] },
  clientRole: 'deny',
  input: listMediaInput,
  output: page(mediaAssetSchema),
  handler: async ({ auth }, input) => {
    const limit = parseLimit(input.limit, config.media.listDefault, config.media.listMax);
    // spec 1 rule 1: a project of another workspace is not found, never an empty page.
    await checkProjectFilter(auth, input.projectId);
    // As the post list reads its page: compiled once per shape, plain rows from a prepared
    // statement, the instant as an ISO string cut from Postgres' text.
    const read = (pos: CursorPosition | null) =>
      readPrepared<WithIsoInstants<AssetRow>>(
        mediaPage(
          { project: input.projectId !== undefined, cursor: pos !== null, limit },
          { workspaceId: auth.workspaceId, projectId: input.projectId, cursorCreatedAt: pos?.createdAt, cursorId: pos?.id },
        ),
        { types: TIMESTAMPS_AS_ISO },
      );
    return keysetPage<WithIsoInstants<AssetRow>, ReturnType<typeof presentAsset>>(read, {
      limit,
      cursor: input.cursor,
      filters: { projectId: input.projectId, list: 'media' },
      table: 'media_assets',
      present: presentAsset,
    });
  },
});

export const getMedia = defineOperation({
  name: 'media.get',
  summary: 'One media-library asset.',
  kind: 'read',
  scopes: { allOf: ['media:read'] },
  clientRole: 'deny',
  input: getMediaInput,
  output: single(mediaAssetSchema),
  handler: async ({ auth }, input) => {
    const row = await MediaAsset.forWorkspace(auth.workspaceId).findById(input.mediaId);
    if (!row) throw new ApiError('not_found', 'No such media asset.');
    return { data: presentAsset(row) };
  },
});

/** Rows of the workspace's assets with these keys (others are simply absent: rule 1). */
export async function assetsByKey(workspaceId: string, keys: string[]): Promise<Map<string, AssetRow>> {
  if (keys.length === 0) return new Map();
  const rows = await MediaAsset.forWorkspace(workspaceId).whereIn('media_assets.key', keys);
  return new Map(rows.map((r) => [r.key, r]));
}
