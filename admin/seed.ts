import type { AnyOperation } from '../api/operation';
import { AdminError } from './provision';
import { callOperation as call, operatorContext } from './asOperator';

// Demo and support data made through the API's own operations (notes.create, posts.create,
// posts.update; admin/asOperator.ts), not by writing rows: a seeded post is validated, named,
// slotted and, when it has a schedule, verified and handed to its publish workflow exactly as a
// client's would be, so it really publishes.

const DEMO_LINES = [
  'Three things we learned shipping every week for a year.',
  'The best meeting is the one that became a written update.',
  'Why our onboarding checklist now fits on one page.',
  'What a failed launch taught us about listening to support.',
  'Small, boring improvements compound faster than big bets.',
  'How we cut our review time in half without skipping reviews.',
];

export function demoText(i: number, kind: 'post' | 'note'): string {
  const line = DEMO_LINES[i % DEMO_LINES.length]!;
  return kind === 'note' ? `Idea: ${line}` : `${line}\n\nA demo ${kind} (#${i + 1}) seeded by an operator.`;
}

export interface SeedPostsInput {
  workspaceId: string;
  projectId: string;
  count: number;
  content?: string;
  title?: string;
  contentType?: string;
  statusCategory?: string;
  statusId?: string;
  /** First post's schedule (ISO 8601, offset-less = the project's zone); later ones follow `spacingMinutes` apart. */
  scheduledFor?: string;
  spacingMinutes: number;
}

export async function seedPosts(input: SeedPostsInput) {
  const ctx = await operatorContext(input.workspaceId);
  const { createPost, updatePost } = await import('../api/operations/posts/posts');
  const first = input.scheduledFor !== undefined ? scheduleStart(input.scheduledFor) : undefined;
  const posts: unknown[] = [];
  for (let i = 0; i < input.count; i++) {
    const created = await call<{ data: { id: string } }>(createPost as AnyOperation, ctx, {
      projectId: input.projectId,
      content: input.content ?? demoText(i, 'post'),
      title: input.title,
      contentType: input.contentType,
    });
    let post: unknown = created.data;
    if (input.statusCategory !== undefined || input.statusId !== undefined) {
      post = (
        await call<{ data: unknown }>(updatePost as AnyOperation, ctx, {
          postId: created.data.id,
          statusCategory: input.statusCategory,
          statusId: input.statusId,
        })
      ).data;
    }
    if (first) {
      // PATCH /v1/posts/{id} with scheduledFor: the connection check, the slot, post.scheduled
      // and the publish workflow's signal, as for any client (spec 3.1).
      const at = first.shift(i * input.spacingMinutes);
      try {
        post = (await call<{ data: unknown }>(updatePost as AnyOperation, ctx, { postId: created.data.id, scheduledFor: at })).data;
      } catch (err) {
        if (err instanceof AdminError) throw new AdminError(`${err.message} (post ${created.data.id} was created and stays a draft)`);
        throw err;
      }
    }
    posts.push(post);
  }
  return posts;
}

export interface SeedNotesInput {
  workspaceId: string;
  projectId: string;
  count: number;
  content?: string;
  contentType?: string;
  slotDate?: string;
  spacingMinutes: number;
}

export async function seedNotes(input: SeedNotesInput) {
  const ctx = await operatorContext(input.workspaceId);
  const { createNote } = await import('../api/operations/notes/notes');
  const first = input.slotDate !== undefined ? scheduleStart(input.slotDate) : undefined;
  const notes: unknown[] = [];
  for (let i = 0; i < input.count; i++) {
    const r = await call<{ data: unknown }>(createNote as AnyOperation, ctx, {
      projectId: input.projectId,
      content: input.content ?? demoText(i, 'note'),
      contentType: input.contentType,
      slotDate: first ? first.shift(i * input.spacingMinutes) : undefined,
    });
    notes.push(r.data);
  }
  return notes;
}

/**
 * A first date-time and its successors, kept in the caller's notation: an offset-less value
 * stays offset-less (read in the project's zone by the operation), one with an offset keeps it.
 */
function scheduleStart(raw: string) {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/.exec(raw);
  if (!m)
    throw new AdminError(`"${raw}" is not an ISO 8601 date-time (e.g. 2027-01-15T09:00:00Z, or 2027-01-15T09:00 in the project's zone)`);
  const offset = m[3];
  // Arithmetic on the wall-clock fields as if UTC, then written back in the same notation.
  const base = Date.parse(`${m[1]}${m[2] ?? ':00'}Z`);
  return {
    shift(minutes: number): string {
      if (minutes === 0) return raw;
      const t = new Date(base + minutes * 60_000).toISOString().slice(0, 19);
      return offset ? `${t}${offset}` : t;
    },
  };
}
