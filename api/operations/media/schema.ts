import { z } from 'zod';
import { config } from '../../../lib/config';
import { paginationInput } from '../../pagination';
import { boundedText } from '../../validation';

const id = z.string().min(1).max(100);
const m = config.media;

/**
 * spec 4.7 own-image import: exactly one of content_base64 or uploadId; sha256 and mimeType on
 * the inline path only; the character limits of spec 8 (a breach is 413, as for post text).
 */
export const importMediaInput = z
  .object({
    projectId: id.optional(),
    content_base64: z.string().min(1).optional(),
    sha256: z
      .string()
      .regex(/^[0-9A-Fa-f]{64}$/, 'must be a hex SHA-256 digest (64 characters)')
      .optional(),
    uploadId: id.optional(),
    fileName: boundedText(m.fileNameChars, 'fileName').pipe(z.string().min(1)).optional(),
    mimeType: boundedText(m.mimeTypeChars, 'mimeType').pipe(z.string().min(1)).optional(),
    alt: boundedText(m.altChars, 'alt').optional(),
    title: boundedText(m.titleChars, 'title').optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    if ((b.content_base64 === undefined) === (b.uploadId === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['content_base64'], message: 'send exactly one of `content_base64` or `uploadId`.' });
    }
    if (b.uploadId !== undefined && b.sha256 !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['sha256'],
        message: '`sha256` is for the inline path only; it is refused beside `uploadId` (the upload is hashed when imported).',
      });
    }
    if (b.uploadId !== undefined && b.mimeType !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['mimeType'],
        message: '`mimeType` is for the inline path only; on the `uploadId` path the stored content type is authoritative.',
      });
    }
  });

export const listMediaInput = z
  .object({
    projectId: id.optional(),
    ...paginationInput,
  })
  .strict();

export const getMediaInput = z.object({ mediaId: id }).strict();

export const postMediaInput = z
  .object({
    postId: id,
    images: z.array(
      z
        .object({
          key: z.string().min(1).max(300),
          alt: boundedText(m.altChars, 'alt').optional(),
          name: boundedText(m.titleChars, 'name').optional(),
        })
        .strict(),
    ),
  })
  .strict();

export type ImportMediaInput = z.infer<typeof importMediaInput>;

// ---- output (spec 2.13, docs/media.md; lib/presenters/media.ts)

export { mediaAssetSchema, type MediaAsset } from '../../../lib/presenters/media';
