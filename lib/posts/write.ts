import type { Knex } from 'knex';
import { deriveTitle } from '../llm/title';
import { newId } from '../ids';
import { emitEvent } from '../outbox';
import { presentPost, type PostRow } from './present';
import { defaultStatus } from './statuses';

// Writes shared by every door that creates or changes posts (REST, MCP, generation jobs).

export interface NewPost {
  workspaceId: string; projectId: string; content: string; title?: string; contentType: string;
  scheduledAt?: Date | null; status?: 'draft' | 'scheduled';
}

export async function insertPost(trx: Knex.Transaction, p: NewPost): Promise<PostRow> {
  const scheduled = !!p.scheduledAt;
  const status = await defaultStatus(trx, p.workspaceId, scheduled ? 'scheduled' : 'draft');
  const id = newId('post');
  const [row] = await trx('posts').insert({
    id, workspace_id: p.workspaceId, project_id: p.projectId,
    status: scheduled ? 'scheduled' : (p.status ?? 'draft'), status_id: status?.id ?? null,
    title: p.title ?? '', title_auto: !p.title,
    content: p.content, content_type: p.contentType,
    scheduled_at: p.scheduledAt ?? null, schedule_version: scheduled ? 1 : 0,
    delivery: scheduled ? JSON.stringify({ state: 'scheduled', willRetry: false, retryUntil: null, detail: null }) : null,
  }).returning('*');
  if (scheduled) await upsertSlot(trx, row as PostRow, p.scheduledAt!);
  const post = await loadPostForUpdate(trx, p.workspaceId, id);
  await emitEvent(trx, { workspaceId: p.workspaceId, projectId: p.projectId, type: 'post.created', data: { post: presentPost(post!) } });
  if (scheduled) await emitEvent(trx, { workspaceId: p.workspaceId, projectId: p.projectId, type: 'post.scheduled', data: { post: presentPost(post!) } });
  return post!;
}

export async function upsertSlot(trx: Knex.Transaction, post: Pick<PostRow, 'id' | 'workspace_id' | 'project_id' | 'content_type'>, date: Date): Promise<void> {
  await trx('calendar_slots').insert({
    id: newId('slot'), workspace_id: post.workspace_id, project_id: post.project_id, date, content_type: post.content_type, post_id: post.id,
  }).onConflict('post_id').merge({ date, content_type: post.content_type });
}

export async function clearSlot(trx: Knex.Transaction, postId: string): Promise<void> {
  await trx('calendar_slots').where({ post_id: postId }).delete();
}

/** The post with its status label, locked for the rest of the transaction when asked. */
export async function loadPostForUpdate(trx: Knex | Knex.Transaction, workspaceId: string, postId: string, lock = false): Promise<PostRow | undefined> {
  const q = trx('posts as p')
    .leftJoin('post_statuses as s', 's.id', 'p.status_id')
    .join('workspaces as w', 'w.id', 'p.workspace_id')
    .where({ 'p.id': postId, 'p.workspace_id': workspaceId })
    .whereNull('p.deleted_at')
    .first('p.*', 's.title as status_title', 's.category as status_category', 'w.require_review_workflow');
  if (lock) q.forUpdate('p');
  return q as Promise<PostRow | undefined>;
}

/** spec 4.4 PATCH title: a post with no name yet is named from its opening line. */
export function autoTitle(content: string): string {
  return deriveTitle(content);
}
