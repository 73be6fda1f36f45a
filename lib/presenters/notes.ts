import { z } from 'zod';
import type { Note as NoteModel } from '../models';
import { dateTime, objectComponent } from './output';

// spec 2.8: the note, with its paired calendar slot.

export const noteSchema = objectComponent('Note', {
  id: z.string().describe('note_*'),
  projectId: z.string(),
  content: z.string(),
  createdAt: dateTime,
  slot: z.object({ date: dateTime, contentType: z.string() }).strict().nullable(),
  folderId: z.string().nullable(),
  updatedAt: dateTime,
});

export type Note = z.infer<typeof noteSchema>;

/** A note read with its slot (the model's `slot` relation). */
export function presentNote(n: NoteModel): Note {
  return {
    id: n.id,
    projectId: n.project_id,
    content: n.content,
    createdAt: n.created_at.toISOString(),
    slot: n.slot ? { date: n.slot.date.toISOString(), contentType: n.slot.content_type ?? 'PERSONAL' } : null,
    folderId: n.folder_id,
    updatedAt: n.updated_at.toISOString(),
  };
}
