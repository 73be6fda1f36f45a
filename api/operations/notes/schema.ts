import { z } from 'zod';
import { component, dateTime } from '../../output';

// spec 2.8: the note.

export const noteSchema = component(
  'Note',
  z
    .object({
      id: z.string().describe('note_*'),
      projectId: z.string(),
      content: z.string(),
      createdAt: dateTime,
      slot: z.object({ date: dateTime, contentType: z.string() }).strict().nullable(),
      folderId: z.string().nullable(),
      updatedAt: dateTime,
    })
    .strict(),
);

export type Note = z.infer<typeof noteSchema>;
