import { createNote, getNote, listNotes } from '../../operations/notes/notes';
import { operationTool, READ, WRITE } from '../tool';

// spec 4.9: list_notes, get_note (notes:read), create_note (notes:write).

export const listNotesTool = operationTool(listNotes, {
  name: 'list_notes',
  title: 'List notes',
  description:
    'Notes of a project, newest first, each with its paired calendar slot; dateFrom/dateTo (YYYY-MM-DD) filter on the slot date. Cursor-paginated. Requires notes:read.',
  annotations: { ...READ, idempotentHint: true },
  defaultProject: true,
});

export const getNoteTool = operationTool(getNote, {
  name: 'get_note',
  title: 'Get a note',
  description: 'One note with its calendar slot. Requires notes:read.',
  annotations: { ...READ, idempotentHint: true },
});

export const createNoteTool = operationTool(createNote, {
  name: 'create_note',
  title: 'Create a note',
  description:
    'Creates a note and queues its calendar slot (slotDate, or the next free weekday 09:00 in the project timezone). Pass a stable clientId so that a retried call lands on the same note. Requires notes:write.',
  annotations: WRITE,
  defaultProject: true,
  idempotent: true,
  argumentNotes: {
    clientId: 'A stable id of your own for this note (spec 4.3): a retry with the same clientId returns the note created first.',
  },
});
