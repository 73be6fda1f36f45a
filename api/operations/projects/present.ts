import type { TransactionOrKnex } from 'objection';
import { networkBlock, PROJECT_CONNECTION_COLUMNS, storedConnection, type JoinedConnection } from '../../../lib/connectionState';
import { db } from '../../../lib/db';
import { aiLimitColumns, aiLimitsOf, budgetKeySql, type AiLimits } from '../../../lib/spend/meters';
import { Project as ProjectModel, type ProjectColumns, type ProjectType, type Reach } from '../../../lib/models';
import type { Project } from './schema';

export type { ProjectType };
export const PROJECT_TYPE_LABELS: Record<ProjectType, string> = {
  PERSONAL_BRAND: 'Network Account',
  COMPANY_PAGE: 'Company Page',
  AMPLIFIER: 'Amplifier Account',
};

/** A project with the columns of its connection that every project read needs (c_*: null when unlinked). */
export type ProjectRow = ProjectColumns &
  Omit<JoinedConnection, 'last_error' | 'last_failure_at'> & {
    c_id: string | null;
    c_display_name: string | null;
    c_last_error: string | null;
    c_last_failure_at: Date | null;
  };

/** Projects the reader may see, joined with their connection. */
export function projectQuery(reach: Reach, trx?: TransactionOrKnex) {
  return ProjectModel.activeFor(reach, trx)
    .leftJoin('network_connections as c', 'c.id', 'projects.connection_id')
    .select(...PROJECT_CONNECTION_COLUMNS)
    .castTo<ProjectRow[]>();
}

export function projectName(row: Pick<ProjectRow, 'type' | 'display_name' | 'slug' | 'c_display_name'>): string {
  // spec 2.5: personal accounts show the connected user's name; company pages their company name.
  if (row.type !== 'COMPANY_PAGE' && row.c_display_name) return row.c_display_name;
  return row.display_name || row.slug;
}

export function presentProject(row: ProjectRow, now = new Date()): Project {
  return {
    id: row.id,
    name: projectName(row),
    type: row.type,
    typeLabel: PROJECT_TYPE_LABELS[row.type] ?? row.type,
    status: row.status,
    username: row.username,
    avatarUrl: row.avatar_url,
    // spec 2.5: derived from status; unknown values read as active.
    isActive: row.status !== 'INACTIVE' && row.status !== 'ARCHIVED',
    createdAt: row.created_at.toISOString(),
    network: row.c_id
      ? networkBlock(
          { ...storedConnection(row), last_error: row.c_last_error, last_failure_at: row.c_last_failure_at },
          { workspaceId: row.workspace_id, projectId: row.id },
          now,
        )
      : null,
  };
}

export async function findProject(reach: Reach, projectId: string, trx?: TransactionOrKnex): Promise<ProjectRow | undefined> {
  return projectQuery(reach, trx).where('projects.id', projectId).first().castTo<ProjectRow | undefined>();
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
