import { config } from '../../../lib/config';
import { db } from '../../../lib/db';
import { ApiError, errors } from '../../../lib/errors';
import {
  estimateCompletionMs, JOB_COLUMNS, presentJob, progressNow, TERMINAL_STATUSES, type GenerationJobInput, type JobRow,
} from '../../../lib/generation/jobs';
import { budgetTargetOf, loadAiLimits, reservationFor, reserveGenerationSpend, settleJobSpend } from '../../../lib/generation/spend';
import { startGenerationWorkflow } from '../../../lib/generation/workflowClient';
import { contentTypeForPillar, ideaBriefText } from '../../../lib/ideas/ideas';
import { newId } from '../../../lib/ids';
import { log } from '../../../lib/logger';
import { parseInZone } from '../../../lib/time';
import type { AuthContext } from '../../auth/context';
import { scoped } from '../../auth/context';
import { jobSchema, single } from '../../openapi/resources';
import { defineOperation } from '../../operation';
import { findProject, type ProjectRow } from '../projects/present';
import { createGenerationInput, type CreateGenerationInput } from './schema';

// spec 4.4 POST /v1/posts/generations: validate, reserve AI spend and the weekly budget, record
// a QUEUED job, start its workflow, and optionally wait for it. Always answers { data: Job }.

type ContentType = NonNullable<NonNullable<CreateGenerationInput['options']>['contentType']>;

interface ResolvedSource { source: GenerationJobInput['source']; text: string; slotContentType: ContentType | null }

async function resolveSource(auth: AuthContext, project: ProjectRow, source: NonNullable<CreateGenerationInput['source']>): Promise<ResolvedSource> {
  if (source.type === 'text') return { source: { type: 'text' }, text: source.text!, slotContentType: null };
  if (source.type === 'idea') {
    const idea = await scoped(auth, 'ideas').where('ideas.id', source.ideaId!)
      .first('ideas.project_id', 'ideas.title', 'ideas.content', 'ideas.pillar', 'ideas.post_type', 'ideas.asset_format', 'ideas.hook', 'ideas.topic');
    // Like a note (spec 4.4): an idea of another project, or none, is 422 — the body is at fault.
    if (!idea || idea.project_id !== project.id) {
      throw errors.unprocessable('`source.ideaId` must name an idea of the same project.', { ideaId: source.ideaId, projectId: project.id });
    }
    // spec 4.4: an idea source fills options.contentType from the idea's pillar (docs/ideas.md).
    return { source: { type: 'idea', ideaId: source.ideaId }, text: ideaBriefText(idea), slotContentType: contentTypeForPillar(idea.pillar) as ContentType | null };
  }
  const note = await scoped(auth, 'notes').leftJoin('calendar_slots as s', 's.note_id', 'notes.id')
    .where('notes.id', source.noteId!).first('notes.project_id', 'notes.content', 's.content_type as slot_content_type');
  // spec 4.4: a note of another project (or none at all) is 422, not 404: the body is at fault.
  if (!note || note.project_id !== project.id) {
    throw errors.unprocessable('`source.noteId` must name a note of the same project.', { noteId: source.noteId, projectId: project.id });
  }
  return { source: { type: 'note', noteId: source.noteId }, text: note.content, slotContentType: note.slot_content_type ?? null };
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * spec 4.4 wait_for_completion_ms: polls the job row (the API's view) until a final status or
 * the deadline. The row answers the same whether or not a worker is up, which a wait inside the
 * workflow (update-with-start) would not.
 */
async function waitForFinalState(jobId: string, waitMs: number): Promise<JobRow> {
  const deadline = Date.now() + waitMs;
  let delay = 50;
  for (;;) {
    const row = (await db()('jobs').where({ id: jobId }).first(JOB_COLUMNS)) as JobRow;
    const left = deadline - Date.now();
    if (TERMINAL_STATUSES.includes(row.status) || left <= 0) return row;
    await sleep(Math.min(delay, left));
    delay = Math.min(delay * 1.5, 500);
  }
}

/**
 * The workflow could not be started. A job that is still QUEUED is removed together with its
 * reservation, so the caller's retry (5xx releases the Idempotency-Key) starts clean; one that
 * already left QUEUED did start (only the answer was lost) and is returned as usual.
 */
async function withdrawUnstartedJob(jobId: string): Promise<boolean> {
  return db().transaction(async (trx) => {
    const row = await trx('jobs').where({ id: jobId, status: 'QUEUED' }).forUpdate().first('id');
    if (!row) return false;
    await settleJobSpend(trx, jobId);
    await trx('jobs').where({ id: jobId }).delete();
    return true;
  });
}

export const createGeneration = defineOperation({
  name: 'posts.generate',
  summary: 'Queue an AI post generation job that writes one draft; optionally wait for it.',
  kind: 'write',
  // spec 4.1: posts:write alone on REST (a refusal names it); the generate_post tool asks for
  // posts:generate instead (spec 4.9, api/mcp/tools/jobs.ts).
  scopes: { allOf: ['posts:write'] },
  clientRole: 'deny',
  inputSource: 'body',
  input: createGenerationInput,
  output: single(jobSchema),
  errors: ['spend_cap_exceeded', 'usage_limit_exceeded', 'temporarily_unavailable'],
  handler: async ({ auth }, input) => {
    const project = await findProject(auth, input.projectId!);
    if (!project) throw errors.notFound('project');
    const scheduledFor = input.scheduledFor !== undefined ? validateScheduledFor(input.scheduledFor, project) : undefined;
    const resolved = await resolveSource(auth, project, input.source!);
    const jobInput: GenerationJobInput = {
      source: resolved.source,
      sourceText: resolved.text,
      language: input.options?.language ?? project.language,
      contentType: input.options?.contentType ?? resolved.slotContentType ?? defaultContentType(project),
      ...(scheduledFor ? { scheduledFor } : {}),
    };
    const estimatedMs = await estimateCompletionMs();

    const jobId = newId('job');
    const now = new Date();
    const target = budgetTargetOf(project);
    const limits = await loadAiLimits(db(), auth.workspaceId, target);
    const reservation = reservationFor(target, now);
    const job = await db().transaction(async (trx) => {
      const [row] = await trx('jobs').insert({
        id: jobId, workspace_id: auth.workspaceId, project_id: project.id, type: 'POST_GENERATION', status: 'QUEUED',
        input: JSON.stringify(jobInput), progress: JSON.stringify(progressNow(0, 'Waiting for a worker', now)),
        estimated_completion_ms: estimatedMs, created_by: auth.principal.id,
        reserved_cents: reservation.reservedCents, spend_day: reservation.spendDay, budget_key: reservation.budgetKey, budget_week: reservation.budgetWeek,
      }).returning(JOB_COLUMNS.map((c) => c.slice('jobs.'.length)));
      // Last before COMMIT, so the workspace's hot meter rows are held as briefly as possible. A
      // refusal throws and rolls the job back with it: nothing queued, nothing reserved.
      await reserveGenerationSpend(trx, { workspaceId: auth.workspaceId, target, projectId: project.id, limits, reservation, now });
      return row as JobRow;
    });

    try {
      await startGenerationWorkflow({ id: job.id, workspace_id: job.workspace_id, project_id: project.id });
    } catch (err) {
      if (await withdrawUnstartedJob(job.id)) {
        log.error('generation workflow could not be started; job withdrawn', { jobId: job.id, err });
        throw new ApiError(503, 'temporarily_unavailable', 'The job queue is unreachable right now; nothing was queued and no spend was reserved. Retry shortly.', undefined, { 'Retry-After': '5' });
      }
    }

    const waitMs = Math.min(Math.max(input.wait_for_completion_ms ?? 0, 0), config.limits.waitForCompletionMaxMs);
    // The row's progress, not a workflow query: the answer must not outlast the caller's hint.
    return { data: presentJob(waitMs === 0 ? job : await waitForFinalState(job.id, waitMs)) };
  },
});
