import type { TransactionOrKnex } from 'objection';
import { PROJECT_CONNECTION_COLUMNS } from '../../../lib/connectionState';
import { db, readPrepared, shapedRead } from '../../../lib/db';
import { aiLimitColumns, aiLimitsOf, budgetKeySql, type AiLimits } from '../../../lib/spend/meters';
import { Project as ProjectModel, reachParams, reachShape, reachValues, type Reach } from '../../../lib/models';
import type { ProjectRow } from '../../../lib/presenters/projects';

// The project reads every operation shares: the projects a reader may see, joined with their
// connection (the row lib/presenters/projects.ts presents).

/** Projects the reader may see, joined with their connection. */
export function projectQuery(reach: Reach, trx?: TransactionOrKnex) {
  return ProjectModel.activeFor(reach, trx)
    .leftJoin('network_connections as c', 'c.id', 'projects.connection_id')
    .select(...PROJECT_CONNECTION_COLUMNS)
    .castTo<ProjectRow[]>();
}

/**
 * One project by id (findProject), by shape: how many projects the reader is narrowed to (null:
 * every project of its workspace). Compiled once per shape and read as a prepared statement, as
 * the post list's page is (lib/db.ts `shapedRead`): most reads of a project begin here.
 */
const projectById = shapedRead(
  (projects: number | null, param: (name: 'workspaceId' | 'projectIds' | 'projectId', index?: number) => string) =>
    projectQuery(reachParams(projects, param)).where('projects.id', param('projectId')).toKnexQuery(),
);

export async function findProject(reach: Reach, projectId: string): Promise<ProjectRow | undefined> {
  const [row] = await readPrepared<ProjectRow>(projectById(reachShape(reach), { ...reachValues(reach), projectId }));
  return row;
}

/**
 * findProject and, in the same statement, the AI limits its jobs reserve against
 * (loadAiLimits with the project's budget target): what an AI job's accept path reads.
 */
export async function findProjectWithAiLimits(
  reach: Reach,
  projectId: string,
): Promise<{ project: ProjectRow; limits: AiLimits } | undefined> {
  const row = await projectQuery(reach)
    .join('workspaces as ai_w', 'ai_w.id', 'projects.workspace_id')
    .leftJoin('workspaces as ai_b', 'ai_b.id', 'ai_w.billing_workspace_id')
    .leftJoin('ai_budgets as ai_ab', (j) =>
      j.on('ai_ab.workspace_id', 'ai_w.id').andOn('ai_ab.budget_key', db().raw(budgetKeySql('projects'))),
    )
    .select(aiLimitColumns('ai_'))
    .where('projects.id', projectId)
    .first()
    .castTo<(ProjectRow & Record<string, unknown>) | undefined>();
  return row && { project: row, limits: aiLimitsOf(row, 'ai_') };
}
