import type { Knex } from 'knex';
import type { Post } from '../../lib/models';
import { POST_SUMMARY_COLUMNS } from '../../lib/posts/summaryColumns';

/**
 * The page query of listPosts (api/operations/posts/posts.ts), clause for clause, as a knex
 * builder: the operation builds it inline among its filters, so the benches that take the
 * request apart (stages.ts, serve-bare.ts's knex piece) rebuild the plain first page here. The
 * model is passed in so the bare server loads lib/models only when it asks for this piece.
 */
export function postsPageQuery(model: typeof Post, workspaceId: string, projectId: string, limit: number, knex?: Knex) {
  return model
    .forWorkspace(workspaceId, knex)
    .toKnexQuery()
    .whereNull('posts.deleted_at')
    .where('posts.project_id', projectId)
    .select(...POST_SUMMARY_COLUMNS)
    .orderBy([
      { column: 'posts.created_at', order: 'desc' },
      { column: 'posts.id', order: 'desc' },
    ])
    .limit(limit + 1);
}
