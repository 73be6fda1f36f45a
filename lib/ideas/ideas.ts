import type { Knex } from 'knex';
import { raw, type TransactionOrKnex } from 'objection';
import { db } from '../db';
import { newId } from '../ids';
import { Idea as IdeaModel, type IdeaColumns, type Reach } from '../models';

// The idea board (spec 2.9, 3.3). What an idea reads as, in one place, so that the REST/MCP
// operations, the calendar and the generation activity agree. The rules are in docs/ideas.md.

export const WRITABLE_IDEA_STATUSES = ['inbox', 'in_production'] as const;
export const IDEA_STATUSES = ['inbox', 'in_production', 'review', 'done'] as const;
export type IdeaStatus = (typeof IDEA_STATUSES)[number];

/**
 * The linked post's board category (spec 2.7 statusCategory): its workspace status when it
 * has one, otherwise the category its legacy status (spec 3.1) belongs to.
 */
export const LINKED_CATEGORY_SQL = `case
  when lp.id is null then null
  when ls.category is not null then ls.category
  when lp.status = 'published' then 'published'
  when lp.status = 'scheduled' then 'scheduled'
  when lp.status in ('waitingApproval', 'approved', 'rejected') then 'review'
  when lp.status = 'suggested' then 'suggested'
  else 'draft' end`;

/**
 * spec 3.3: `review` and `done` are derived from the linked post, never stored.
 * - done: the linked post is published (legacy status `published` or the published category);
 * - review: the linked post sits in the review category (or the legacy `waitingApproval`);
 * - otherwise the stored, writable status (`inbox` or `in_production`).
 */
export const DERIVED_STATUS_SQL = `case
  when lp.id is null then ideas.status
  when lp.status = 'published' or ls.category = 'published' then 'done'
  when lp.status = 'waitingApproval' or ls.category = 'review' then 'review'
  else ideas.status end`;

/** An idea as every read shows it: its columns (the date as text) and what is derived from the linked post. */
export type IdeaRow = Omit<IdeaColumns, 'scheduled_for'> & {
  scheduled_for_text: string | null;
  derived_status: IdeaStatus;
  linked_category: string | null;
};

/** The ideas a reader sees, joined with their linked post (a removed post does not count as linked). */
export function ideaQuery(reach: Reach, trx?: TransactionOrKnex) {
  return IdeaModel.visibleTo(reach, trx)
    .leftJoin('posts as lp', (j) => j.on('lp.id', 'ideas.linked_post_id').andOnNull('lp.deleted_at'))
    .leftJoin('post_statuses as ls', 'ls.id', 'lp.status_id')
    .select(
      'ideas.*',
      raw(`to_char(ideas.scheduled_for, 'YYYY-MM-DD') as scheduled_for_text`),
      raw(`(${DERIVED_STATUS_SQL}) as derived_status`),
      raw(`(${LINKED_CATEGORY_SQL}) as linked_category`),
    )
    .castTo<IdeaRow[]>();
}

/**
 * spec 4.4: an idea source fills `options.contentType` from the idea's pillar when omitted.
 * Pillars are free text; the first keyword found (case-insensitive) decides; anything else,
 * including no pillar, leaves the project's default (docs/ideas.md has the table).
 */
export const PILLAR_CONTENT_TYPES: ReadonlyArray<{ keywords: readonly string[]; contentType: string }> = [
  {
    keywords: ['educat', 'how-to', 'how to', 'tutorial', 'tips', 'lesson', 'guide', 'learn', 'expert', 'thought leadership'],
    contentType: 'EDUCATIONAL',
  },
  {
    keywords: ['culture', 'team', 'hiring', 'internal', 'behind the scenes', 'employee', 'company news'],
    contentType: 'BUSINESS_INTERNAL',
  },
  {
    keywords: ['product', 'customer', 'sales', 'launch', 'case study', 'promo', 'offer', 'business', 'marketing'],
    contentType: 'BUSINESS_EXTERNAL',
  },
  { keywords: ['personal', 'story', 'journey', 'life', 'opinion', 'founder'], contentType: 'PERSONAL' },
];

/** The content type a pillar names, or null when it names none (the project default applies). */
export function contentTypeForPillar(pillar: string | null | undefined): string | null {
  const p = (pillar ?? '').trim().toLowerCase();
  if (!p) return null;
  for (const row of PILLAR_CONTENT_TYPES) if (row.keywords.some((k) => p.includes(k))) return row.contentType;
  return null;
}

/** The steering text a generation from an idea writes from: the brief, field by field. */
export function ideaBriefText(r: Pick<IdeaRow, 'title' | 'content' | 'pillar' | 'post_type' | 'asset_format' | 'hook' | 'topic'>): string {
  const lines = [
    r.title && `Idea: ${r.title}`,
    r.topic && `Topic: ${r.topic}`,
    r.pillar && `Content pillar: ${r.pillar}`,
    r.post_type && `Post type: ${r.post_type}`,
    r.asset_format && `Asset format: ${r.asset_format}`,
    r.hook && `Hook: ${r.hook}`,
    r.content && `\n${r.content}`,
  ].filter(Boolean);
  return lines.join('\n').trim();
}

/**
 * A new idea, in the API's field names (POST /v1/ideas' input; bin/admin `idea create`, `seed
 * ideas`), with its workspace, its resolved project and its starting status.
 */
export interface NewIdea {
  workspaceId: string;
  projectId: string;
  status: string;
  title: string;
  content?: string;
  pillar?: string | null;
  postType?: string | null;
  assetFormat?: string | null;
  hook?: string | null;
  topic?: string | null;
  scheduledFor?: string | null;
  linkedPostId?: string | null;
}

/** Writes a new idea; answers its id. */
export async function insertIdea(idea: NewIdea): Promise<string> {
  const id = newId('idea');
  await db()('ideas').insert({
    id,
    workspace_id: idea.workspaceId,
    project_id: idea.projectId,
    title: idea.title,
    content: idea.content ?? '',
    pillar: idea.pillar ?? null,
    post_type: idea.postType ?? null,
    asset_format: idea.assetFormat ?? null,
    hook: idea.hook ?? null,
    topic: idea.topic ?? null,
    scheduled_for: idea.scheduledFor ?? null,
    linked_post_id: idea.linkedPostId ?? null,
    status: idea.status,
  });
  return id;
}

/**
 * Links a freshly written draft to its idea and moves the idea to `in_production` (spec 4.4
 * idea source). Runs inside the transaction that inserts the draft, so both land or neither.
 */
export async function linkDraftToIdea(trx: Knex.Transaction, workspaceId: string, ideaId: string, postId: string): Promise<void> {
  await IdeaModel.forWorkspace(workspaceId, trx)
    .findById(ideaId)
    .patch({ linked_post_id: postId, status: 'in_production', updated_at: trx.fn.now() });
}
