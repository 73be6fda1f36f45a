import { Model } from 'objection';
import { WorkspaceScopedModel } from './scoped';

/** A calendar slot (spec 2.8): the date a note or a post is planned for. */
export class CalendarSlot extends WorkspaceScopedModel {
  static tableName = 'calendar_slots';

  declare id: string;
  declare workspace_id: string;
  declare project_id: string;
  declare date: Date;
  declare content_type: string;
  declare note_id: string | null;
  declare post_id: string | null;
  declare created_at: Date;
}

export class Note extends WorkspaceScopedModel {
  static tableName = 'notes';

  declare id: string;
  declare workspace_id: string;
  declare project_id: string;
  declare content: string;
  declare folder_id: string | null;
  declare client_id: string | null;
  declare created_at: Date;
  declare updated_at: Date;
  /** Loaded with `withGraphJoined('slot')`; null when the note has none. */
  declare slot?: CalendarSlot | null;

  static relationMappings = () => ({
    slot: { relation: Model.HasOneRelation, modelClass: CalendarSlot, join: { from: 'notes.id', to: 'calendar_slots.note_id' } },
  });
}
