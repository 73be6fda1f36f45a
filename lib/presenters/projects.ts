import { z } from 'zod';
import { networkBlock, storedConnection, type JoinedConnection } from '../connectionState';
import type { ProjectColumns, ProjectType } from '../models';
import { dateTime, nullableDateTime, objectComponent } from './output';

// spec 2.5 / 2.6: the project as every door returns it, and its network connection block.

export const networkBlockSchema = objectComponent('NetworkConnection', {
  state: z.enum(['connected', 'expiring_soon', 'degraded', 'disconnected', 'revoked']),
  canPublish: z.boolean(),
  connectionStatus: z.string(),
  lastValidatedAt: nullableDateTime,
  accessTokenExpiresAt: nullableDateTime,
  detail: z.string().nullable(),
  reconnectUrl: z.string().nullable(),
});

export const projectShape = {
  id: z.string().describe('proj_*'),
  name: z.string(),
  type: z.string().describe('PERSONAL_BRAND, COMPANY_PAGE or AMPLIFIER'),
  typeLabel: z.string(),
  status: z.string(),
  username: z.string().nullable(),
  avatarUrl: z.string().nullable(),
  isActive: z.boolean(),
  createdAt: dateTime,
  network: networkBlockSchema.nullable(),
};

export const projectSchema = objectComponent('Project', projectShape);

/** spec 2.4: the publishing streak of a project (the workspace context, analytics). */
export const streakSchema = z.object({ currentStreak: z.number().int(), longestStreak: z.number().int() }).strict();

export type Project = z.infer<typeof projectSchema>;

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
