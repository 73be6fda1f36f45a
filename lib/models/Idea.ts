import { WorkspaceScopedModel } from './scoped';

/** The columns of `ideas` (spec 2.9). */
export interface IdeaColumns {
  id: string;
  workspace_id: string;
  project_id: string;
  title: string;
  content: string;
  pillar: string | null;
  post_type: string | null;
  asset_format: string | null;
  hook: string | null;
  topic: string | null;
  scheduled_for: Date | null;
  /** The stored, writable status; `review` and `done` are derived (lib/ideas/ideas.ts). */
  status: string;
  linked_post_id: string | null;
  created_at: Date;
  updated_at: Date;
}

// Column properties come from the interface of the same name, as in ./Project.ts.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
export interface Idea extends IdeaColumns {}

/** An idea on a project's board (spec 2.9, 3.3). */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class Idea extends WorkspaceScopedModel {
  static tableName = 'ideas';
}
