import type { Knex } from 'knex';
import { errors } from '../errors';
import { newId } from '../ids';
import { PostStatus } from '../models';

// Workspace custom statuses (spec 2.7 statusCategory / statusId): each workspace has one
// default per category, created with the workspace.
export const STATUS_CATEGORIES = ['suggested', 'draft', 'inProgress', 'review', 'scheduled', 'published'] as const;
export type StatusCategory = (typeof STATUS_CATEGORIES)[number];

const DEFAULT_TITLES: Record<StatusCategory, string> = {
  suggested: 'Suggested',
  draft: 'Draft',
  inProgress: 'In progress',
  review: 'In review',
  scheduled: 'Scheduled',
  published: 'Published',
};

export async function createDefaultStatuses(trx: Knex | Knex.Transaction, workspaceId: string): Promise<void> {
  await trx('post_statuses').insert(
    STATUS_CATEGORIES.map((category, position) => ({
      id: newId('postStatus'),
      workspace_id: workspaceId,
      category,
      title: DEFAULT_TITLES[category],
      is_default: true,
      position,
    })),
  );
}

export async function defaultStatus(
  trx: Knex | Knex.Transaction,
  workspaceId: string,
  category: StatusCategory,
): Promise<{ id: string; title: string; category: StatusCategory } | undefined> {
  return PostStatus.forWorkspace(workspaceId, trx)
    .where({ category, is_default: true })
    .select('id', 'title', 'category')
    .first()
    .castTo<{ id: string; title: string; category: StatusCategory } | undefined>();
}

export interface BoardStatus {
  id: string;
  category: StatusCategory;
}

/** spec 4.4 PATCH: `statusId` (from the post-status list) or the default status of `statusCategory`; 422 for an id not of this workspace. */
export async function resolveStatus(
  trx: Knex | Knex.Transaction,
  workspaceId: string,
  input: { statusId?: string; statusCategory?: StatusCategory },
): Promise<BoardStatus | undefined> {
  if (input.statusId === undefined && input.statusCategory === undefined) return undefined;
  const status =
    input.statusId !== undefined
      ? await PostStatus.forWorkspace(workspaceId, trx).findById(input.statusId).select('id', 'category')
      : await defaultStatus(trx, workspaceId, input.statusCategory!);
  if (!status)
    throw errors.unprocessable('`statusId` is not a status of this workspace; list them with GET /v1/post-statuses.', {
      statusId: input.statusId,
    });
  return { id: status.id, category: status.category as StatusCategory };
}

export const LEGACY_STATUSES = [
  'waitingProcessing',
  'draft',
  'waitingApproval',
  'approved',
  'rejected',
  'scheduled',
  'published',
  'suggested',
  'failed_to_publish',
] as const;

// Custom statuses (spec 2.7 statusId; bin/admin `status ...`): the workspace's board columns
// beyond the six defaults. Each lives in one category, which decides what a post in it is
// (CATEGORY_TO_LEGACY); the category's default is where `statusCategory` moves a post.

export const STATUS_TITLE_CHARS = 120;

export interface StatusRow {
  id: string;
  workspace_id: string;
  category: StatusCategory;
  title: string;
  is_default: boolean;
  position: number;
}

async function checkTitle(trx: Knex | Knex.Transaction, workspaceId: string, title: string, exceptId?: string): Promise<string> {
  const t = title.trim();
  if (!t || t.length > STATUS_TITLE_CHARS) throw errors.unprocessable(`A status title is 1 to ${STATUS_TITLE_CHARS} characters.`);
  const clash = PostStatus.forWorkspace(workspaceId, trx).whereRaw('lower(title) = lower(?)', [t]).select('id').first();
  if (exceptId) clash.whereNot({ id: exceptId });
  if (await clash) throw errors.unprocessable(`The workspace already has a status titled "${t}".`, { title: t });
  return t;
}

async function lockStatuses(trx: Knex.Transaction, workspaceId: string): Promise<void> {
  // Title uniqueness and the one default per category are checked, then written, under this lock.
  await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`post-statuses:${workspaceId}`]);
}

/** A new status in `category`, listed with that category's statuses; `makeDefault` moves the default to it. */
export async function createStatus(
  db: Knex,
  workspaceId: string,
  input: { category: StatusCategory; title: string; makeDefault?: boolean },
): Promise<StatusRow> {
  if (!(STATUS_CATEGORIES as readonly string[]).includes(input.category))
    throw errors.unprocessable(`A status category is one of ${STATUS_CATEGORIES.join(', ')}.`);
  return db.transaction(async (trx) => {
    await lockStatuses(trx, workspaceId);
    const title = await checkTitle(trx, workspaceId, input.title);
    if (input.makeDefault) await PostStatus.forWorkspace(workspaceId, trx).where({ category: input.category }).patch({ is_default: false });
    const [row] = await trx('post_statuses')
      .insert({
        id: newId('postStatus'),
        workspace_id: workspaceId,
        category: input.category,
        title,
        is_default: input.makeDefault ?? false,
        // The list orders by position: the category's place among the six keeps its statuses together.
        position: STATUS_CATEGORIES.indexOf(input.category),
      })
      .returning('*');
    return row as StatusRow;
  });
}

export async function renameStatus(db: Knex, workspaceId: string, statusId: string, title: string): Promise<StatusRow> {
  return db.transaction(async (trx) => {
    await lockStatuses(trx, workspaceId);
    const t = await checkTitle(trx, workspaceId, title, statusId);
    const [row] = await PostStatus.forWorkspace(workspaceId, trx).where({ id: statusId }).patch({ title: t }).returning('*');
    if (!row) throw errors.notFound('post status');
    return row as StatusRow;
  });
}

/** Makes the status its category's default (the one `statusCategory` moves posts to); posts keep their status. */
export async function setDefaultStatus(db: Knex, workspaceId: string, statusId: string): Promise<StatusRow> {
  return db.transaction(async (trx) => {
    await lockStatuses(trx, workspaceId);
    const statuses = () => PostStatus.forWorkspace(workspaceId, trx);
    const s = await statuses().findById(statusId).select('id', 'category');
    if (!s) throw errors.notFound('post status');
    await statuses().where({ category: s.category }).whereNot({ id: s.id }).patch({ is_default: false });
    const [row] = await statuses().where({ id: s.id }).patch({ is_default: true }).returning('*');
    return row as StatusRow;
  });
}
