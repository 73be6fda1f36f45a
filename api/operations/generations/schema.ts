import { z } from 'zod';
import { config } from '../../../lib/config';
import { boundedText, CONTENT_TYPES, isoDateTime } from '../../validation';

// spec 4.4 POST /v1/posts/generations. Missing `projectId` or source fields answer 400
// invalid_request (spec 7.2); a bad shape or enum 422; `source.text` over 100,000 characters 413.

const required = (path: (string | number)[], message: string) => ({
  code: 'custom' as const,
  path,
  message,
  params: { apiCode: 'invalid_request' },
});

export const SOURCE_TYPES = ['text', 'note', 'idea', 'source'] as const;

/** The one field each variant carries besides `type`. */
const VARIANT_FIELD = { text: 'text', note: 'noteId', idea: 'ideaId', source: 'sourceId' } as const;

// Variant fields are checked below rather than by a strict union, so that a missing field of
// the named variant answers invalid_request (spec 7.2) rather than a union mismatch.
const sourceInput = z
  .object({
    type: z.string().max(40).optional(),
    text: boundedText(config.limits.sourceTextChars, 'source.text').optional(),
    noteId: z.string().min(1).max(100).optional(),
    ideaId: z.string().min(1).max(100).optional(),
    sourceId: z.string().min(1).max(100).optional(),
  })
  .loose()
  .describe(
    'spec 4.4: one of four variants — `{ type: "text", text }`, `{ type: "note", noteId }`, `{ type: "idea", ideaId }`, `{ type: "source", sourceId }` (a source of the same project whose status is Success; docs/generation.md "Sources").',
  );

export const createGenerationInput = z
  .object({
    projectId: z.string().min(1).max(100).optional(),
    source: sourceInput.optional(),
    scheduledFor: isoDateTime.optional(),
    options: z
      .object({
        language: z
          .string()
          .trim()
          .min(1, '`options.language` must not be empty.')
          .max(config.limits.languageChars, `\`options.language\` is at most ${config.limits.languageChars} characters.`)
          .optional(),
        contentType: z.enum(CONTENT_TYPES).optional(),
      })
      .strict()
      .optional(),
    // Clamped to 0..25,000 by the handler (spec 8); only a non-integer is refused.
    wait_for_completion_ms: z.number().int().optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.projectId === undefined) ctx.addIssue(required(['projectId'], '`projectId` is required.'));
    const source = body.source;
    if (source === undefined) {
      ctx.addIssue(
        required(
          ['source'],
          '`source` is required: `{ "type": "text", "text": "..." }`, `{ "type": "note", "noteId": "note_..." }`, `{ "type": "idea", "ideaId": "idea_..." }` or `{ "type": "source", "sourceId": "src_..." }`.',
        ),
      );
      return;
    }
    if (source.type === undefined) {
      ctx.addIssue(required(['source', 'type'], '`source.type` is required: `text`, `note`, `idea` or `source`.'));
      return;
    }
    if (!(SOURCE_TYPES as readonly string[]).includes(source.type)) {
      ctx.addIssue({ code: 'custom', path: ['source', 'type'], message: `must be one of ${SOURCE_TYPES.join(', ')}.` });
      return;
    }
    const allowed = ['type', VARIANT_FIELD[source.type as (typeof SOURCE_TYPES)[number]]];
    const extra = Object.keys(source).filter((k) => !allowed.includes(k));
    if (extra.length)
      ctx.addIssue({ code: 'custom', path: ['source', extra[0]!], message: `is not a field of a \`${source.type}\` source.` });
    if (source.type === 'text') {
      if (source.text === undefined) ctx.addIssue(required(['source', 'text'], '`source.text` is required when `source.type` is `text`.'));
      else if (source.text.trim() === '') ctx.addIssue({ code: 'custom', path: ['source', 'text'], message: 'must contain some text.' });
    }
    if (source.type === 'note' && source.noteId === undefined)
      ctx.addIssue(required(['source', 'noteId'], '`source.noteId` is required when `source.type` is `note`.'));
    // The idea variant (docs/ideas.md): `{ type: 'idea', ideaId }`.
    if (source.type === 'idea' && source.ideaId === undefined)
      ctx.addIssue(required(['source', 'ideaId'], '`source.ideaId` is required when `source.type` is `idea`.'));
    // A named source (spec 2.11; docs/generation.md "Sources"): `{ type: 'source', sourceId }`.
    if (source.type === 'source' && source.sourceId === undefined)
      ctx.addIssue(required(['source', 'sourceId'], '`source.sourceId` is required when `source.type` is `source`.'));
  });

export type CreateGenerationInput = z.infer<typeof createGenerationInput>;
