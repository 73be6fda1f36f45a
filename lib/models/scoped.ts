import { Model, type ModelConstructor, type TransactionOrKnex } from 'objection';

// CONVENTIONS.md habit 5, by construction: a workspace table is read through `forWorkspace`
// (or `visibleTo`), so a query without the workspace condition has to be written on purpose.
// A foreign id is then simply not found.

/** Who reads: a workspace, and for plain members only their assigned projects (spec 5.5). AuthContext is one. */
export interface Reach {
  workspaceId: string;
  projectIds: ReadonlySet<string> | null;
}

/** The statics these builders use, typed to the subclass they are called on. */
type ScopedClass<M extends Model> = ModelConstructor<M> & {
  tableName: string;
  projectColumn: string | null;
  query<Q extends Model>(this: ModelConstructor<Q>, trx?: TransactionOrKnex): Q['QueryBuilderType'];
};

/** A table with a `workspace_id` column. */
export class WorkspaceScopedModel extends Model {
  /** The column naming the row's project (narrowed for plain members); null when rows are not per project. */
  static projectColumn: string | null = 'project_id';

  /** Rows of one workspace. */
  static forWorkspace<M extends Model>(this: ScopedClass<M>, workspaceId: string, trx?: TransactionOrKnex): M['QueryBuilderType'] {
    return this.query(trx).where(`${this.tableName}.workspace_id`, workspaceId);
  }

  /** Rows of the reader's workspace, narrowed to its assigned projects for plain members. */
  static visibleTo<M extends Model>(this: ScopedClass<M>, reach: Reach, trx?: TransactionOrKnex): M['QueryBuilderType'] {
    const q = this.query(trx).where(`${this.tableName}.workspace_id`, reach.workspaceId);
    if (reach.projectIds && this.projectColumn) q.whereIn(`${this.tableName}.${this.projectColumn}`, [...reach.projectIds]);
    return q;
  }
}
