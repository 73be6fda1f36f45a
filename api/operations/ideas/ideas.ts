import { db, readPrepared, shapedRead, TIMESTAMPS_AS_ISO, type WithIsoInstants } from '../../../lib/db';
import { errors } from '../../../lib/errors';
import { Idea, Post, reachParams, reachShape, reachValues } from '../../../lib/models';
import { DERIVED_STATUS_SQL, ideaQuery, insertIdea, type IdeaRow } from '../../../lib/ideas/ideas';
import { presentIdea } from '../../../lib/presenters/ideas';
import type { AuthContext } from '../../auth/context';
import { page, single } from '../../output';
import { defineOperation } from '../../operation';
import { keysetClauses, keysetPage, parseLimit } from '../../pagination';
import type { CursorPosition } from '../../../lib/tokens';
import { resolveProjectOrDefault } from '../projects/resolve';
import { BRIEF_COLUMNS, createIdeaInput, getIdeaInput, ideaSchema, listIdeasInput, updateIdeaInput } from './schema';

// The idea board (spec 2.9, 3.3, 4.6). PATCH is the spec's; create, list and get are the
// additions 9.3 allows so that the board is usable through the API. docs/ideas.md has the rules.
//
// Scopes: the spec names `ideas:write` for the PATCH and no read scope for ideas. Reads take
// `ideas:write` too: idea content is only shown to a credential consented for the board (a
// read-only consent never sees it), and spec 5.2 rule 2 would let `ideas:write` satisfy an
// `ideas:read` anyway. Client-role accounts are refused on every idea operation (spec 5.4).

/** Every idea operation: `ideas:write` (see above), and no client-role accounts (spec 5.4). */
const IDEA_ACCESS = { scopes: { allOf: ['ideas:write'] }, clientRole: 'deny' } as const;

const resolveProject = resolveProjectOrDefault;

async function loadIdea(auth: AuthContext, id: string): Promise<IdeaRow | undefined> {
  return ideaQuery(auth).findById(id).castTo<IdeaRow | undefined>();
}

/** A post of the same project that may be linked to an idea (spec 2.9 linkedPost). */
async function requireLinkablePost(auth: AuthContext, projectId: string, postId: string): Promise<void> {
  const post = await Post.forWorkspace(auth.workspaceId).findById(postId).whereNull('posts.deleted_at').select('posts.project_id');
  if (!post || post.project_id !== projectId)
    throw errors.unprocessable("`linkedPostId` must name a post of the idea's project.", { linkedPostId: postId });
}

export const createIdea = defineOperation({
  name: 'ideas.create',
  summary: "Add an idea to a project's board (status inbox unless in_production is given).",
  kind: 'write',
  ...IDEA_ACCESS,
  input: createIdeaInput,
  output: single(ideaSchema),
  handler: async ({ auth }, input) => {
    const project = await resolveProject(auth, input.projectId);
    if (input.linkedPostId) await requireLinkablePost(auth, project.id, input.linkedPostId);
    const id = await insertIdea({
      ...input,
      workspaceId: auth.workspaceId,
      projectId: project.id,
      // Linking a post means work has started on it.
      status: input.status ?? (input.linkedPostId ? 'in_production' : 'inbox'),
    });
    return { data: presentIdea((await loadIdea(auth, id))!) };
  },
});

/**
 * The idea board's page (GET /v1/ideas), by shape: how many projects the reader is narrowed to
 * (null: every project), whether statuses filter it, whether a cursor positions it, the page size.
 */
const ideasPage = shapedRead(
  (
    shape: { projects: number | null; statuses: boolean; cursor: boolean; limit: number },
    param: (name: 'workspaceId' | 'projectIds' | 'projectId' | 'statuses' | 'cursorCreatedAt' | 'cursorId', index?: number) => string,
  ) => {
    const q = ideaQuery(reachParams(shape.projects, param)).where('ideas.project_id', param('projectId'));
    // The filter is on the derived status, so "done" finds ideas whose post went live.
    if (shape.statuses) q.whereRaw(`(${DERIVED_STATUS_SQL}) = any(?)`, [param('statuses')]);
    const pos = shape.cursor ? { createdAt: param('cursorCreatedAt'), id: param('cursorId') } : null;
    return keysetClauses(q.toKnexQuery(), pos, shape.limit, 'ideas');
  },
);

export const listIdeas = defineOperation({
  name: 'ideas.list',
  summary: 'The ideas of a project, newest first; status filters on the derived status.',
  kind: 'read',
  ...IDEA_ACCESS,
  input: listIdeasInput,
  output: page(ideaSchema),
  handler: async ({ auth }, input) => {
    const limit = parseLimit(input.limit);
    const project = await resolveProject(auth, input.projectId);
    const statuses = input.status?.split(',').map((s) => s.trim());
    const filters = { projectId: project.id, status: statuses?.slice().sort().join(',') };
    // As the post list reads its page: compiled once per shape, plain rows from a prepared
    // statement, the instants as ISO strings cut from Postgres' text.
    const read = (pos: CursorPosition | null) =>
      readPrepared<WithIsoInstants<IdeaRow>>(
        ideasPage(
          { projects: reachShape(auth), statuses: statuses !== undefined, cursor: pos !== null, limit },
          {
            ...reachValues(auth),
            projectId: project.id,
            statuses,
            cursorCreatedAt: pos?.createdAt,
            cursorId: pos?.id,
          },
        ),
        { types: TIMESTAMPS_AS_ISO },
      );
    return keysetPage<WithIsoInstants<IdeaRow>, ReturnType<typeof presentIdea>>(read, {
      limit,
      cursor: input.cursor,
      filters,
      table: 'ideas',
      present: presentIdea,
    });
  },
});

export const getIdea = defineOperation({
  name: 'ideas.get',
  summary: 'One idea with its derived status and linked post.',
  kind: 'read',
  ...IDEA_ACCESS,
  input: getIdeaInput,
  output: single(ideaSchema),
  handler: async ({ auth }, input) => {
    const row = await loadIdea(auth, input.ideaId);
    if (!row) throw errors.notFound('idea');
    return { data: presentIdea(row) };
  },
});

export const updateIdea = defineOperation({
  name: 'ideas.update',
  summary: 'Edit an idea: only the fields sent change; null clears a brief field.',
  kind: 'write',
  ...IDEA_ACCESS,
  input: updateIdeaInput,
  output: single(ideaSchema),
  handler: async ({ auth }, input) => {
    const project = await resolveProject(auth, input.projectId);
    const existing = await loadIdea(auth, input.ideaId);
    // An idea outside the named (or default) project is not found there.
    if (!existing || existing.project_id !== project.id) throw errors.notFound('idea');
    if (input.linkedPostId) await requireLinkablePost(auth, project.id, input.linkedPostId);
    const patch: Record<string, unknown> = { updated_at: db().fn.now() };
    if (input.title !== undefined) patch.title = input.title;
    if (input.content !== undefined) patch.content = input.content;
    for (const [k, col] of Object.entries(BRIEF_COLUMNS)) {
      const v = input[k as keyof typeof BRIEF_COLUMNS];
      if (v !== undefined) patch[col] = v; // null clears (spec 4.6)
    }
    if (input.scheduledFor !== undefined) patch.scheduled_for = input.scheduledFor;
    if (input.linkedPostId !== undefined) {
      patch.linked_post_id = input.linkedPostId;
      if (input.linkedPostId && input.status === undefined && existing.status === 'inbox') patch.status = 'in_production';
    }
    if (input.status !== undefined) patch.status = input.status;
    await Idea.forWorkspace(auth.workspaceId).findById(existing.id).patch(patch);
    return { data: presentIdea((await loadIdea(auth, existing.id))!) };
  },
});
