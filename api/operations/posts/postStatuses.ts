import { CLIENT_VIEW, Post, PostStatus } from '../../../lib/models';
import { page } from '../../output';
import { postStatusSchema, listPostStatusesInput } from './schema';
import { defineOperation } from '../../operation';
import { onlyPage } from '../../pagination';

export const listPostStatuses = defineOperation({
  name: 'postStatuses.list',
  summary: 'The workspace custom post statuses, with their category and post counts.',
  kind: 'read',
  scopes: { allOf: ['posts:read'] },
  clientRole: 'narrow',
  input: listPostStatusesInput,
  output: page(postStatusSchema),
  handler: async ({ auth }) => {
    // spec 5.4: a client counts only the posts of its view.
    const counts = Post.readableBy(auth)
      .whereNull('posts.deleted_at')
      .groupBy('posts.status_id')
      .select('posts.status_id')
      .count({ n: '*' });
    const q = PostStatus.forWorkspace(auth.workspaceId)
      .alias('s')
      .leftJoin(counts.as('c'), 'c.status_id', 's.id')
      // Board order: by category (position), then the order statuses were made in, so a custom
      // status (bin/admin post-status create) follows its category's built-in one.
      .orderBy([
        { column: 's.position', order: 'asc' },
        { column: 's.created_at', order: 'asc' },
        { column: 's.id', order: 'asc' },
      ])
      .select('s.id', 's.title', 's.category', 's.is_default', 's.position', 'c.n');
    // spec 5.4: the client view shows only the columns of review, scheduled and published.
    if (auth.role === 'client') q.whereIn('s.category', [...CLIENT_VIEW.categories]);
    const rows = await q.castTo<Array<PostStatus & { n: number | null }>>();
    return onlyPage(
      rows.map((r) => ({
        id: r.id,
        title: r.title,
        category: r.category,
        isDefault: r.is_default,
        position: r.position,
        postCount: Number(r.n ?? 0),
      })),
    );
  },
});
