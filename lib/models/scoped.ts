import type { Knex } from 'knex';
import { Model, type ModelConstructor, type TransactionOrKnex } from 'objection';
import { ServiceModel } from './base';

// CONVENTIONS.md habits 5 and 15, by construction: a workspace table is read and written through
// `forWorkspace` (or `visibleTo`), so a query without the workspace condition has to be written
// on purpose. A foreign id is then simply not found. The conditions name the table as the query
// finally calls it (`tableRefFor`, read when the query is built), so `.alias('p')` keeps them.

/** Who reads: a workspace, and for plain members only their assigned projects (spec 5.5). AuthContext is one. */
export interface Reach {
  workspaceId: string;
  projectIds: ReadonlySet<string> | null;
}

/**
 * A reach in a read compiled once per shape (lib/db.ts `shapedRead`): its shape is how many
 * projects it is narrowed to (`reachShape`, null for every one), its values `reachValues`, and
 * `reachParams` is the reach the read is written with, its values as params.
 */
export const reachShape = (reach: Reach): number | null => reach.projectIds?.size ?? null;

export function reachValues(reach: Reach): { workspaceId: string; projectIds: string[] | null } {
  return { workspaceId: reach.workspaceId, projectIds: reach.projectIds && [...reach.projectIds] };
}

export function reachParams(projects: number | null, param: (name: 'workspaceId' | 'projectIds', index?: number) => string): Reach {
  return {
    workspaceId: param('workspaceId'),
    projectIds: projects === null ? null : new Set(Array.from({ length: projects }, (_, i) => param('projectIds', i))),
  };
}

/** The statics these builders use, typed to the subclass they are called on. */
type ScopedClass<M extends Model> = ModelConstructor<M> & {
  tableName: string;
  projectColumn: string | null;
  query<Q extends Model>(this: ModelConstructor<Q>, trx?: TransactionOrKnex): Q['QueryBuilderType'];
};

/** A table with a `workspace_id` column. */
export class WorkspaceScopedModel extends ServiceModel {
  /** The column naming the row's project (narrowed for plain members); null when rows are not per project. */
  static projectColumn: string | null = 'project_id';

  /** Rows of one workspace. */
  static forWorkspace<M extends Model>(this: ScopedClass<M>, workspaceId: string, trx?: TransactionOrKnex): M['QueryBuilderType'] {
    // The one place the condition is written (eslint.config.js, RAW_WORKSPACE_WHERE).
    // eslint-disable-next-line no-restricted-syntax
    return this.query(trx).onBuild((q: M['QueryBuilderType']) => q.where(`${q.tableRefFor(q.modelClass())}.workspace_id`, workspaceId));
  }

  /**
   * `forWorkspace` as a knex builder that selects nothing yet, for a read shaped in knex (raw
   * select lists, a subquery written into SQL). `alias` names the table as `'posts as p'` would.
   */
  static knexForWorkspace<M extends Model>(
    this: ScopedClass<M>,
    workspaceId: string,
    trx?: TransactionOrKnex,
    alias?: string,
  ): Knex.QueryBuilder {
    const q = (this as unknown as typeof WorkspaceScopedModel).forWorkspace(workspaceId, trx);
    if (alias) q.alias(alias);
    return q.toKnexQuery().clearSelect();
  }

  /** Rows of the reader's workspace, narrowed to its assigned projects for plain members. */
  static visibleTo<M extends Model>(this: ScopedClass<M>, reach: Reach, trx?: TransactionOrKnex): M['QueryBuilderType'] {
    const { projectColumn } = this;
    return this.query(trx).onBuild((q: M['QueryBuilderType']) => {
      const table = q.tableRefFor(q.modelClass());
      // eslint-disable-next-line no-restricted-syntax
      q.where(`${table}.workspace_id`, reach.workspaceId);
      if (reach.projectIds && projectColumn) q.whereIn(`${table}.${projectColumn}`, [...reach.projectIds]);
    });
  }

  /**
   * Rows any of these readers sees (each as `visibleTo` would read it; one reader a workspace),
   * in one statement whose text does not depend on how many readers there are: the readers are
   * joined in as (workspace, project) pairs, a reader of the whole workspace as one pair without
   * a project, so each pair is one probe of the table's workspace index.
   */
  static visibleToAny<M extends Model>(this: ScopedClass<M>, reaches: readonly Reach[], trx?: TransactionOrKnex): M['QueryBuilderType'] {
    const { projectColumn } = this;
    const workspaceIds: string[] = [];
    const projectIds: Array<string | null> = [];
    for (const reach of reaches)
      for (const projectId of reach.projectIds && projectColumn ? reach.projectIds : [null]) {
        workspaceIds.push(reach.workspaceId);
        projectIds.push(projectId);
      }
    return this.query(trx).onBuild((q: M['QueryBuilderType']) => {
      const table = q.tableRefFor(q.modelClass());
      q.joinRaw(
        `join unnest(?::text[], ?::text[]) as reader(workspace_id, project_id) on ${table}.workspace_id = reader.workspace_id` +
          (projectColumn ? ` and (reader.project_id is null or ${table}.${projectColumn} = reader.project_id)` : ''),
        [workspaceIds, projectIds],
      );
    });
  }
}
