// spec 2.8: the note operations' output (lib/presenters/notes.ts).

export { noteSchema, type Note } from '../../../lib/presenters/notes';
