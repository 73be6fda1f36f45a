import { z } from 'zod';
import { config } from '../../../lib/config';
import { KNOWLEDGE_SCOPES, KNOWLEDGE_TYPES } from '../../../lib/knowledge/documents';
import { videoIdOf } from '../../../lib/knowledge/youtube';
import { paginationInput } from '../../pagination';
import { INLINE_FIELDS, inlineFileFields, refineFileInput } from '../sources/schema';
import { boundedText } from '../../validation';

// Inputs of the knowledge operations (spec 4.5; docs/knowledge.md "Requests").

/** spec 8: `source.text` for generation is 100,000 characters; a text document takes the same. */
export const KNOWLEDGE_TEXT_CHARS = 100_000;

export const createKnowledgeInput = z
  .object({
    type: z.enum(KNOWLEDGE_TYPES),
    projectId: z.string().min(1).max(100).optional(),
    scope: z.enum(KNOWLEDGE_SCOPES).optional(),
    name: z.string().trim().min(1).max(300).optional(),
    tags: z.array(z.string().trim().min(1).max(50)).max(20).optional(),
    folderId: z.string().min(1).max(100).optional(),
    language: z
      .string()
      .max(16)
      .regex(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/, 'must be a language tag such as en or pt-BR')
      .optional(),
    text: boundedText(KNOWLEDGE_TEXT_CHARS, 'text').optional(),
    uploadId: z.string().min(1).max(100).optional(),
    ...inlineFileFields,
    url: z.string().min(1).max(2048).optional(),
    videoId: z.string().min(1).max(2048).optional(),
    wait_for_completion_ms: z.number().int().optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    const need = (field: 'text' | 'url' | 'videoId') => {
      if (b[field] === undefined || (field === 'text' && b.text!.trim() === ''))
        ctx.addIssue({ code: 'custom', path: [field], message: `\`${field}\` is required for type ${b.type}.` });
    };
    const only: Record<string, string> = { text: 'text', file: 'uploadId', url: 'url', youtube: 'videoId' };
    for (const f of ['text', 'uploadId', 'url', 'videoId', ...INLINE_FIELDS] as const) {
      const fileField = f === 'uploadId' || (INLINE_FIELDS as readonly string[]).includes(f);
      if (f !== only[b.type] && !(b.type === 'file' && fileField) && !(b.type === 'youtube' && f === 'url') && b[f] !== undefined)
        ctx.addIssue({ code: 'custom', path: [f], message: `\`${f}\` does not apply to type ${b.type}.` });
    }
    if (b.type === 'youtube') {
      const raw = b.videoId ?? b.url;
      if (raw === undefined)
        ctx.addIssue({ code: 'custom', path: ['videoId'], message: '`videoId` (or a YouTube `url`) is required for type youtube.' });
      else if (!videoIdOf(raw))
        ctx.addIssue({ code: 'custom', path: ['videoId'], message: 'must be a YouTube video id (11 characters) or a YouTube URL.' });
      return;
    }
    if (b.type === 'file') return refineFileInput(b, ctx);
    need(only[b.type] as 'text' | 'url' | 'videoId');
    if (b.type === 'url' && b.url !== undefined) {
      let url: URL | null = null;
      try {
        url = new URL(b.url);
      } catch {
        url = null;
      }
      if (!url || !(url.protocol === 'https:' || (url.protocol === 'http:' && config.knowledge.allowHttp)))
        ctx.addIssue({ code: 'custom', path: ['url'], message: 'must be an absolute http(s) URL.' });
      else if (url.username || url.password) ctx.addIssue({ code: 'custom', path: ['url'], message: 'must not contain credentials.' });
    }
  });

export const getKnowledgeInput = z
  .object({
    documentId: z.string().min(1).max(100),
    projectId: z.string().min(1).max(100).optional(),
  })
  .strict();

export const listKnowledgeInput = z
  .object({
    projectId: z.string().min(1).max(100).optional(),
    query: z.string().trim().min(1).max(500).optional(),
    ...paginationInput,
  })
  .strict();

// ---- output (spec 2.10, docs/knowledge.md; lib/presenters/knowledge.ts)

export { knowledgeDocumentSchema, knowledgeHitSchema, type KnowledgeDocument } from '../../../lib/presenters/knowledge';
