import { config } from '../../../lib/config';
import { db } from '../../../lib/db';
import { Membership } from '../../../lib/models';
import { roleLabel } from '../../../lib/roles';
import { single } from '../../output';
import { teamSchema, listTeamInput } from './schema';
import { defineOperation } from '../../operation';
import { projectName } from '../../../lib/presenters/projects';

// spec 2.15 + 8: one page of at most 100 members; project references capped at 25 distinct projects.
export const listTeam = defineOperation({
  name: 'team.list',
  summary: 'Members of the workspace with their roles and assigned projects.',
  kind: 'read',
  scopes: { allOf: ['workspace:read'] },
  clientRole: 'deny',
  input: listTeamInput,
  output: single(teamSchema),
  handler: async ({ auth }) => {
    const maxMembers = config.limits.teamMembers;
    const count = await Membership.forWorkspace(auth.workspaceId).resultSize();
    const members = await Membership.forWorkspace(auth.workspaceId)
      .alias('m')
      .join('users as u', 'u.id', 'm.user_id')
      .orderBy([
        { column: 'm.created_at', order: 'asc' },
        { column: 'm.id', order: 'asc' },
      ])
      .limit(maxMembers)
      .select('m.id as membership_id', 'm.role', 'm.created_at', 'u.id as user_id', 'u.name', 'u.email', 'u.avatar_url')
      .castTo<
        Array<{
          membership_id: string;
          role: string;
          created_at: Date;
          user_id: string;
          name: string;
          email: string;
          avatar_url: string | null;
        }>
      >();
    const assignments = members.length
      ? await db()('membership_projects as mp')
          .join('projects as p', 'p.id', 'mp.project_id')
          .leftJoin('network_connections as c', 'c.id', 'p.connection_id')
          .whereIn(
            'mp.membership_id',
            members.map((m) => m.membership_id),
          )
          // spec 5.5: a plain member sees only the projects assigned to it, here as everywhere.
          .modify((q) => {
            if (auth.projectIds) q.whereIn('mp.project_id', [...auth.projectIds]);
          })
          .orderBy('p.created_at', 'desc')
          .select('mp.membership_id', 'p.id', 'p.type', 'p.display_name', 'p.slug', 'c.display_name as c_display_name')
      : [];
    const allowed = new Set<string>();
    let projectsTruncated = false;
    for (const a of assignments) {
      if (allowed.has(a.id)) continue;
      if (allowed.size < config.limits.teamProjectRefs) allowed.add(a.id);
      else projectsTruncated = true;
    }
    const byMember = new Map<string, Array<{ id: string; name: string }>>();
    for (const a of assignments) {
      if (!allowed.has(a.id)) continue;
      const list = byMember.get(a.membership_id) ?? [];
      list.push({ id: a.id, name: projectName(a) });
      byMember.set(a.membership_id, list);
    }
    const totalCount = Number(count);
    return {
      data: {
        members: members.map((m) => ({
          userId: m.user_id,
          name: m.name,
          email: m.email,
          role: m.role,
          roleLabel: roleLabel(m.role),
          avatarUrl: m.avatar_url ?? null,
          joinedAt: m.created_at.toISOString(),
          projects: byMember.get(m.membership_id) ?? [],
        })),
        truncated: totalCount > members.length,
        totalCount,
        projectsTruncated,
      },
    };
  },
});
