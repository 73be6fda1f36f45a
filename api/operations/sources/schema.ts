import { z } from 'zod';
import { config } from '../../../lib/config';
import { boundedText } from '../../validation';

// spec 4.5 POST /v1/sources (docs/sources.md "Creating a source"): `type: text` with `text`, or
// `type: file` with `uploadId` (an upload of purpose `source`) or, inline (spec 4.9),
// `content_base64` + `mimeType` + `filename`. Missing `projectId` or source fields answer 400
// invalid_request (spec 7.2); a bad shape or enum 422; `text` over 100,000 characters 413.

const required = (path: (string | number)[], message: string) => ({
  code: 'custom' as const,
  path,
  message,
  params: { apiCode: 'invalid_request' },
});

const TYPES = ['text', 'file'] as const;
export const INLINE_FIELDS = ['content_base64', 'mimeType', 'filename'] as const;

/** The inline file of spec 4.9 (`content_base64` + `mimeType` + `filename`), shared by sources and knowledge. */
export const inlineFileFields = {
  content_base64: z.string().optional(),
  mimeType: boundedText(config.media.mimeTypeChars, 'mimeType')
    .pipe(z.string().regex(/^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(;.*)?$/, 'must be a media type such as audio/wav'))
    .optional(),
  filename: boundedText(config.media.fileNameChars, 'filename').pipe(z.string().min(1)).optional(),
};

/**
 * A `type: file` body names its file once: `uploadId`, or all three inline fields (spec 4.9).
 * Missing fields answer 400 invalid_request (spec 7.2).
 */
export function refineFileInput(
  b: { uploadId?: string | undefined } & Partial<Record<(typeof INLINE_FIELDS)[number], string | undefined>>,
  ctx: z.RefinementCtx,
): void {
  const inline = INLINE_FIELDS.filter((k) => b[k] !== undefined);
  if (b.uploadId !== undefined && inline.length > 0) {
    ctx.addIssue({ code: 'custom', path: [inline[0]!], message: 'send either `uploadId` or the inline file fields, not both.' });
    return;
  }
  if (b.uploadId === undefined && inline.length === 0) {
    ctx.addIssue(
      required(['uploadId'], '`uploadId` is required when `type` is `file` (or, inline, `content_base64` with `mimeType` and `filename`).'),
    );
    return;
  }
  for (const k of INLINE_FIELDS)
    if (inline.length > 0 && b[k] === undefined) ctx.addIssue(required([k], `\`${k}\` is required with an inline file.`));
}

export const createSourceInput = z
  .object({
    projectId: z.string().min(1).max(100).optional(),
    type: z.string().max(40).optional(),
    name: boundedText(config.sources.nameChars, 'name').pipe(z.string().trim().min(1)).optional(),
    text: boundedText(config.sources.textMaxChars, 'text').optional(),
    uploadId: z.string().min(1).max(100).optional(),
    ...inlineFileFields,
    // Clamped to 0..25,000 by the handler (spec 8); only a non-integer is refused.
    wait_for_completion_ms: z.number().int().optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    if (b.projectId === undefined) ctx.addIssue(required(['projectId'], '`projectId` is required.'));
    if (b.type === undefined) {
      ctx.addIssue(required(['type'], '`type` is required: `text` or `file`.'));
      return;
    }
    if (!(TYPES as readonly string[]).includes(b.type)) {
      ctx.addIssue({ code: 'custom', path: ['type'], message: `must be one of ${TYPES.join(', ')}.` });
      return;
    }
    const present = (k: keyof typeof b) => b[k] !== undefined;
    if (b.type === 'text') {
      for (const k of ['uploadId', ...INLINE_FIELDS, 'wait_for_completion_ms'] as const)
        if (present(k)) ctx.addIssue({ code: 'custom', path: [k], message: 'is not a field of a `text` source.' });
      if (b.text === undefined) ctx.addIssue(required(['text'], '`text` is required when `type` is `text`.'));
      else if (b.text.trim() === '') ctx.addIssue({ code: 'custom', path: ['text'], message: 'must contain some text.' });
      return;
    }
    if (present('text')) ctx.addIssue({ code: 'custom', path: ['text'], message: 'is not a field of a `file` source; use `type: text`.' });
    refineFileInput(b, ctx);
  });

export type CreateSourceInput = z.infer<typeof createSourceInput>;

export const getSourceInput = z.object({ sourceId: z.string().min(1).max(100) }).strict();

// ---- output (spec 2.11, docs/sources.md; lib/presenters/sources.ts)

export { sourceSchema, type Source } from '../../../lib/presenters/sources';
