import type { Knex } from 'knex';
import { errors } from '../errors';
import { newId } from '../ids';

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
  return trx('post_statuses').where({ workspace_id: workspaceId, category, is_default: true }).first('id', 'title', 'category');
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
      ? await trx('post_statuses').where({ workspace_id: workspaceId, id: input.statusId }).first('id', 'category')
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
