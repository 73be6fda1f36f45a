import { z } from 'zod';
import { db } from '../../../lib/db';
import { page } from '../../output';
import { postStatusSchema } from './schema';
import { defineOperation } from '../../operation';
import { CLIENT_VISIBLE_STATUSES } from './posts';

export const listPostStatuses = defineOperation({
  name: 'postStatuses.list',
  summary: 'The workspace custom post statuses, with their category and post counts.',
  kind: 'read',
  scopes: { allOf: ['posts:read'] },
  clientRole: 'narrow',
  inputSource: 'query',
  input: z.object({}).strict(),
  output: page(postStatusSchema),
  handler: async ({ auth }) => {
    const counts = db()('posts')
      .where('workspace_id', auth.workspaceId)
      .whereNull('deleted_at')
      .groupBy('status_id')
      .select('status_id')
      .count({ n: '*' });
    if (auth.projectIds) counts.whereIn('project_id', [...auth.projectIds]);
    if (auth.role === 'client') counts.whereIn('status', CLIENT_VISIBLE_STATUSES);
    const q = db()('post_statuses as s')
      .where('s.workspace_id', auth.workspaceId)
      .leftJoin(counts.as('c'), 'c.status_id', 's.id')
      .orderBy([
        { column: 's.position', order: 'asc' },
        { column: 's.id', order: 'asc' },
      ])
      .select('s.id', 's.title', 's.category', 's.is_default', 's.position', 'c.n');
    // spec 5.4: the client view shows only review, scheduled and published.
    if (auth.role === 'client') q.whereIn('s.category', ['review', 'scheduled', 'published']);
    const rows = await q;
    return {
      data: rows.map((r) => ({
        id: r.id,
        title: r.title,
        category: r.category,
        isDefault: r.is_default,
        position: r.position,
        postCount: Number(r.n ?? 0),
      })),
      pagination: { next_cursor: null, has_more: false },
    };
  },
});
