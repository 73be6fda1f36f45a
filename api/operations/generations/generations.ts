import { config } from '../../../lib/config';
import { db } from '../../../lib/db';
import { charsForTokens } from '../../../lib/knowledge/documents';
import { errors } from '../../../lib/errors';
import { estimateCompletionMs, type GenerationJobInput } from '../../../lib/jobs/kinds/postGeneration';
import { presentJob } from '../../../lib/presenters/jobs';
import { answerWithJob, enqueueJob } from '../../../lib/jobs/queue';
import { contentTypeForPillar, ideaBriefText } from '../../../lib/ideas/ideas';
import { Idea, Note, Source } from '../../../lib/models';
import { parseInZone } from '../../../lib/time';
import type { AuthContext } from '../../auth/context';
import { jobSchema, SPEND_ERRORS } from '../jobs/schema';
import { single } from '../../output';
import { defineOperation } from '../../operation';
import type { ProjectRow } from '../../../lib/presenters/projects';
import { createGenerationInput, type CreateGenerationInput } from './schema';
import { requireProjectWithAiLimits } from '../projects/resolve';

// spec 4.4 POST /v1/posts/generations: validate, reserve AI spend and the weekly budget, record
// a QUEUED job, start its workflow, and optionally wait for it (lib/jobs/queue.ts enqueueJob). Always
// answers { data: Job }.

type ContentType = NonNullable<NonNullable<CreateGenerationInput['options']>['contentType']>;

interface ResolvedSource {
  source: GenerationJobInput['source'];
  text: string;
  slotContentType: ContentType | null;
}

async function resolveSource(
  auth: AuthContext,
  project: ProjectRow,
  source: NonNullable<CreateGenerationInput['source']>,
): Promise<ResolvedSource> {
  if (source.type === 'text') return { source: { type: 'text' }, text: source.text!, slotContentType: null };
  if (source.type === 'idea') {
    const idea = await Idea.forWorkspace(auth.workspaceId)
      .findById(source.ideaId!)
      .select(
        'ideas.project_id',
        'ideas.title',
        'ideas.content',
        'ideas.pillar',
        'ideas.post_type',
        'ideas.asset_format',
        'ideas.hook',
        'ideas.topic',
      );
    // Like a note (spec 4.4): an idea of another project, or none, is 422 — the body is at fault.
    if (!idea || idea.project_id !== project.id) {
      throw errors.unprocessable('`source.ideaId` must name an idea of the same project.', {
        ideaId: source.ideaId,
        projectId: project.id,
      });
    }
    // spec 4.4: an idea source fills options.contentType from the idea's pillar (docs/ideas.md).
    return {
      source: { type: 'idea', ideaId: source.ideaId },
      text: ideaBriefText(idea),
      slotContentType: contentTypeForPillar(idea.pillar) as ContentType | null,
    };
  }
  if (source.type === 'source') return resolveNamedSource(auth, project, source.sourceId!);
  const note = await Note.forWorkspace(auth.workspaceId)
    .leftJoin('calendar_slots as s', 's.note_id', 'notes.id')
    .findById(source.noteId!)
    .select('notes.project_id', 'notes.content', 's.content_type as slot_content_type')
    .castTo<{ project_id: string; content: string; slot_content_type: ContentType | null } | undefined>();
  // spec 4.4: a note of another project (or none at all) is 422, not 404: the body is at fault.
  if (!note || note.project_id !== project.id) {
    throw errors.unprocessable('`source.noteId` must name a note of the same project.', { noteId: source.noteId, projectId: project.id });
  }
  return { source: { type: 'note', noteId: source.noteId }, text: note.content, slotContentType: note.slot_content_type ?? null };
}

/**
 * A named source (docs/generation.md "Sources"): a source of the same project whose text is
 * ready. Like a note (spec 4.4), one of another project, or none, is 422: the body is at fault;
 * one of another workspace reads exactly as none (spec 1 rule 1: nothing tells it exists). The
 * writer's material is the head of the source's text within the grounding token budget, copied
 * into the job as a note's content is, so the job does not depend on the source afterwards.
 */
async function resolveNamedSource(auth: AuthContext, project: ProjectRow, sourceId: string): Promise<ResolvedSource> {
  const row = await Source.forWorkspace(auth.workspaceId)
    .leftJoin('jobs', 'jobs.id', 'sources.job_id')
    .findById(sourceId)
    .select(
      'sources.project_id',
      'sources.status',
      'jobs.status as job_status',
      // One character more than the budget, so that headOf knows the text goes on and cuts at a word end.
      db().raw('left(sources.text, ?) as head', [groundingChars() + 1]),
    )
    .castTo<{ project_id: string; status: string; job_status: string | null; head: string | null } | undefined>();
  if (!row || row.project_id !== project.id) {
    throw errors.unprocessable('`source.sourceId` must name a source of the same project.', { sourceId, projectId: project.id });
  }
  // As GET /v1/sources reads it (docs/sources.md): a file source whose job failed or was cancelled is Failed.
  const status: string = row.status === 'Processing' && ['FAILED', 'CANCELLED'].includes(row.job_status ?? '') ? 'Failed' : row.status;
  // spec 2.11: only a `Success` source has its text; a Processing or Failed one cannot ground a post.
  if (status !== 'Success' || !row.head?.trim()) {
    throw errors.unprocessable(
      status === 'Failed'
        ? '`source.sourceId` names a source whose ingest failed; submit it again.'
        : '`source.sourceId` names a source that is still being processed; retry once its status is `Success`.',
      { sourceId, status, reason: status === 'Failed' ? 'source_failed' : 'source_not_ready' },
    );
  }
  return { source: { type: 'source', sourceId }, text: headOf(row.head as string, groundingChars()), slotContentType: null };
}

/** The grounding token budget in characters (about four a token, as lib/knowledge/documents.ts counts). */
const groundingChars = () => Math.max(4, charsForTokens(config.knowledge.groundingTokenBudget));

/** The text cut to `max` characters at a word boundary when one is near, never inside a surrogate pair. */
function headOf(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = max;
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut--;
  const head = text.slice(0, cut);
  const space = head.search(/\s\S*$/);
  return space > max * 0.8 ? head.slice(0, space) : head;
}

/** spec 4.4 scheduledFor: must parse and be in the future; an offset-less value is project-local. */
function validateScheduledFor(value: string, project: ProjectRow): string {
  const at = parseInZone(value, project.timezone);
  if (Number.isNaN(at.getTime())) throw errors.unprocessable('`scheduledFor` is not a valid date-time.');
  if (at.getTime() <= Date.now()) throw errors.unprocessable('`scheduledFor` must be in the future.', { scheduledFor: at.toISOString() });
  return at.toISOString();
}

// A company speaks as "we"; a personal post is the default everywhere else (spec 4.4 post create).
function defaultContentType(project: ProjectRow): ContentType {
  return project.type === 'COMPANY_PAGE' ? 'BUSINESS_EXTERNAL' : 'PERSONAL';
}

export const createGeneration = defineOperation({
  name: 'posts.generate',
  summary: 'Queue an AI post generation job that writes one draft; optionally wait for it.',
  kind: 'write',
  // spec 4.1: posts:write alone on REST (a refusal names it); the generate_post tool asks for
  // posts:generate instead (spec 4.9, api/mcp/tools/jobs.ts).
  scopes: { allOf: ['posts:write'] },
  clientRole: 'deny',
  input: createGenerationInput,
  output: single(jobSchema),
  errors: [...SPEND_ERRORS, 'temporarily_unavailable'],
  handler: async ({ auth }, input) => {
    // The project and the limits its reservation is checked against, in one statement.
    const { project, limits } = await requireProjectWithAiLimits(auth, input.projectId!);
    const scheduledFor = input.scheduledFor !== undefined ? validateScheduledFor(input.scheduledFor, project) : undefined;
    const resolved = await resolveSource(auth, project, input.source!);
    const jobInput: GenerationJobInput = {
      source: resolved.source,
      sourceText: resolved.text,
      language: input.options?.language ?? project.language,
      contentType: input.options?.contentType ?? resolved.slotContentType ?? defaultContentType(project),
      ...(scheduledFor ? { scheduledFor } : {}),
    };
    const job = await enqueueJob({
      workspaceId: auth.workspaceId,
      createdBy: auth.principal.id,
      project,
      type: 'POST_GENERATION',
      input: jobInput,
      estimatedMs: await estimateCompletionMs(),
      limits,
    });
    return answerWithJob(job, input.wait_for_completion_ms, (row) => ({ data: presentJob(row) }));
  },
});
