import type { TransactionOrKnex } from 'objection';
import { WorkspaceScopedModel, type Reach } from './scoped';

export const PROJECT_TYPES = ['PERSONAL_BRAND', 'COMPANY_PAGE', 'AMPLIFIER'] as const;
export type ProjectType = (typeof PROJECT_TYPES)[number];

/** The columns of `projects`. */
export interface ProjectColumns {
  id: string;
  workspace_id: string;
  type: ProjectType;
  slug: string;
  display_name: string | null;
  username: string | null;
  avatar_url: string | null;
  status: string;
  timezone: string;
  language: string;
  connection_id: string | null;
  network_organization_id: string | null;
  current_streak: number | null;
  longest_streak: number | null;
  created_at: Date;
  updated_at: Date;
}

// The class gets its column properties from the interface of the same name: objection sets
// them from the row, so nothing initializes them in the class (as with `declare` fields).
// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
export interface Project extends ProjectColumns {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class Project extends WorkspaceScopedModel {
  static tableName = 'projects';
  /** A project is its own project: plain members see the assigned ones (spec 5.5). */
  static projectColumn = 'id';

  /**
   * The projects the API shows a reader, the one definition every operation uses: visible to it
   * (`visibleTo`), and not archived (spec 2.5: the API returns active projects; an archived,
   * operator-deleted one is not found).
   */
  static activeFor(reach: Reach, trx?: TransactionOrKnex) {
    return this.visibleTo(reach, trx).onBuild((q) => q.whereNot(`${q.tableRefFor(Project)}.status`, 'ARCHIVED'));
  }
}
