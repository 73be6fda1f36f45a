import { paginationInput } from '../../pagination';
import { isoDate, CONTENT_TYPES, isoDateTime, boundedText } from '../../validation';
import { z } from 'zod';
import { config } from '../../../lib/config';
// spec 2.8: the note operations' output (lib/presenters/notes.ts).

export { noteSchema, type Note } from '../../../lib/presenters/notes';

export const listNotesInput = z
  .object({
    projectId: z.string({ error: '`projectId` is required.' }).min(1).max(100),
    dateFrom: isoDate.optional(),
    dateTo: isoDate.optional(),
    ...paginationInput,
  })
  .strict();

export const getNoteInput = z.object({ noteId: z.string().min(1).max(100) }).strict();

export const createNoteInput = z
  .object({
    projectId: z.string().min(1).max(100),
    content: boundedText(config.limits.contentChars, 'content').refine((s) => s.trim().length > 0, '`content` must not be empty.'),
    slotDate: isoDateTime.optional(),
    contentType: z.enum(CONTENT_TYPES).optional(),
    // notes.folder_id is varchar(40): a longer value would fail the insert as a 500.
    folderId: z.string().max(40).optional(),
    // Agent clients send a stable id so a retried create lands on the same note (spec 4.3).
    clientId: z.string().min(1).max(200).optional(),
  })
  .strict();
