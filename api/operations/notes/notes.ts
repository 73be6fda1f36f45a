import type { Knex } from 'knex';
import type { TransactionOrKnex } from 'objection';
import { db } from '../../../lib/db';
import { errors } from '../../../lib/errors';
import { newId } from '../../../lib/ids';
import { nextWeekdayAt, parseInZone } from '../../../lib/time';
import { Note, type Reach } from '../../../lib/models';
import { presentNote } from '../../../lib/presenters/notes';
import { noteSchema, listNotesInput, getNoteInput, createNoteInput } from './schema';
import { page, single } from '../../output';
import { defineOperation } from '../../operation';
import { keysetPage, parseLimit } from '../../pagination';
import { requireProject } from '../projects/resolve';

// spec 2.8: a note with its paired calendar slot. Creating a note queues a slot: the given
// time, or the next free weekday 09:00 (project timezone) after the project's last slot.

/** Notes the reader may see, each with its slot (the relation is aliased `slot` in SQL). */
function notesOf(reach: Reach, trx?: TransactionOrKnex) {
  return Note.visibleTo(reach, trx).withGraphJoined('slot');
}

export const listNotes = defineOperation({
  name: 'notes.list',
  summary: 'List the notes of a project, newest first; dateFrom/dateTo filter on the slot date.',
  kind: 'read',
  scopes: { allOf: ['notes:read'] },
  clientRole: 'deny',
  input: listNotesInput,
  output: page(noteSchema),
  handler: async ({ auth }, input) => {
    const limit = parseLimit(input.limit);
    await requireProject(auth, input.projectId);
    const q = notesOf(auth).where('notes.project_id', input.projectId);
    if (input.dateFrom) q.where('slot.date', '>=', `${input.dateFrom}T00:00:00Z`);
    if (input.dateTo) q.where('slot.date', '<', new Date(Date.parse(`${input.dateTo}T00:00:00Z`) + 86_400_000));
    return keysetPage<Note, ReturnType<typeof presentNote>>(q, {
      limit,
      cursor: input.cursor,
      filters: { projectId: input.projectId, dateFrom: input.dateFrom, dateTo: input.dateTo },
      table: 'notes',
      present: presentNote,
    });
  },
});

export const getNote = defineOperation({
  name: 'notes.get',
  summary: 'One note with its slot.',
  kind: 'read',
  scopes: { allOf: ['notes:read'] },
  clientRole: 'deny',
  input: getNoteInput,
  output: single(noteSchema),
  handler: async ({ auth }, input) => {
    const row = await notesOf(auth).where('notes.id', input.noteId).first();
    if (!row) throw errors.notFound('note');
    return { data: presentNote(row) };
  },
});

async function nextQueueSlot(trx: Knex.Transaction, projectId: string, timezone: string): Promise<Date> {
  const last = await trx('calendar_slots').where({ project_id: projectId }).max('date as max').first();
  const after = new Date(Math.max(Date.now(), last?.max ? new Date(last.max).getTime() : 0));
  // The walk starts on `after`'s own day: a last slot at 07:00 leaves that day's 09:00 free.
  return nextWeekdayAt(after, timezone, 9);
}

export const createNote = defineOperation({
  name: 'notes.create',
  summary: 'Create a note and queue its calendar slot; idempotent.',
  kind: 'write',
  scopes: { allOf: ['notes:write'] },
  clientRole: 'deny',
  input: createNoteInput,
  output: single(noteSchema),
  handler: async ({ auth }, input) => {
    const project = await requireProject(auth, input.projectId);
    let slotDate: Date | undefined;
    if (input.slotDate) {
      slotDate = parseInZone(input.slotDate, project.timezone);
      if (Number.isNaN(slotDate.getTime())) throw errors.unprocessable('`slotDate` is not a valid date-time.');
    }
    const id = await db().transaction(async (trx) => {
      if (input.clientId) {
        const existing = await Note.forWorkspace(auth.workspaceId, trx)
          .where({ project_id: project.id, client_id: input.clientId })
          .first()
          .select('id');
        if (existing) return existing.id;
      }
      const noteId = newId('note');
      const inserted = await trx('notes')
        .insert({
          id: noteId,
          workspace_id: auth.workspaceId,
          project_id: project.id,
          content: input.content,
          folder_id: input.folderId ?? null,
          client_id: input.clientId ?? null,
        })
        .onConflict(trx.raw('(workspace_id, project_id, client_id) where client_id is not null'))
        .ignore()
        .returning('id');
      if (inserted.length === 0) {
        // A concurrent create with the same clientId won the insert: answer its note.
        const winner = await Note.forWorkspace(auth.workspaceId, trx)
          .where({ project_id: project.id, client_id: input.clientId! })
          .first()
          .select('id');
        if (!winner) throw new Error('note insert conflicted, but no note holds the clientId');
        return winner.id;
      }
      await trx('calendar_slots').insert({
        id: newId('slot'),
        workspace_id: auth.workspaceId,
        project_id: project.id,
        date: slotDate ?? (await nextQueueSlot(trx, project.id, project.timezone)),
        content_type: input.contentType ?? 'PERSONAL',
        note_id: noteId,
      });
      return noteId;
    });
    const row = await notesOf(auth).where('notes.id', id).first();
    if (!row) throw errors.notFound('note');
    return { data: presentNote(row) };
  },
});
