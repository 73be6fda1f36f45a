import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import { finishingJob, finishJob, finishRunningJob } from '../lib/jobs/finish';
import { progressNow, type JobStatus } from '../lib/jobs/row';
import { type GenerationJobInput } from '../lib/jobs/kinds/postGeneration';
import { jobProcessingState, notPausedSql, PAUSED_ERROR_TYPE } from '../lib/generation/pause';
import type { PostWriter } from '../lib/llm/client';
import { isLlmError, shouldRetry } from '../lib/llm/errors';
import type { ContentType } from '../lib/llm/prompts';
import { linkDraftToIdea } from '../lib/ideas/ideas';
import { insertPost } from '../lib/posts/write';
import { config } from '../lib/config';
import { newId } from '../lib/ids';
import { emitEvents, type OutboxEvent } from '../lib/outbox';
import { retrieveKnowledge, workspaceRegconfigsSql } from '../lib/knowledge/documents';
import { chargeJob, failLockedJob, loadRunningJob, lockJob, lockJobWithProject, startQueuedJob, type StartOutcome } from './jobRows';

// Activities of AI post generation (ARCHITECTURE.md: every side effect is an activity; every
// activity is safe to run twice). Each row transition locks the job row and checks its status
// first, so a retry after a lost answer sees its own earlier commit instead of acting again.

export interface GenerationDeps {
  db: Knex;
  writer: PostWriter;
}

/** The progress message a QUEUED job shows while job processing is paused. */
const PAUSED_MESSAGE = 'Waiting: job processing is paused';

/** Well inside the workflow's 20 s heartbeat timeout for writeGenerationDraft. */
const HEARTBEAT_MS = 5_000;

export interface Draft {
  content: string;
  title: string;
  /**
   * What the writer's call cost, added to the job's cost by the completion's final UPDATE rather
   * than by a statement of the writer's activity; absent in drafts of histories from before
   * (their writer activity had charged it already).
   */
  costCents?: number;
  /** The knowledge documents handed to the writer (docs/knowledge.md "Grounding"); absent when none. */
  knowledgeDocumentIds?: string[];
}
export type { StartOutcome };

/**
 * The result a DONE generation job shows, as SQL on its row (the final UPDATE's): the draft,
 * the named source it was written from (docs/generation.md "Sources") when the request named
 * one, and the knowledge documents the writer was given when there were any.
 */
function draftResult(trx: Knex.Transaction, postId: string, draft: Draft): Knex.Raw {
  const own: Record<string, unknown> = { postId };
  if (draft.knowledgeDocumentIds?.length) own.knowledgeDocumentIds = draft.knowledgeDocumentIds;
  return trx.raw(
    `?::jsonb || case when input #>> '{source,type}' = 'source' and coalesce(input #>> '{source,sourceId}', '') <> ''
                 then jsonb_build_object('sourceId', input #> '{source,sourceId}') else '{}'::jsonb end`,
    [JSON.stringify(own)],
  );
}
export type CompleteOutcome = { status: JobStatus | 'MISSING'; postId?: string };

export function createGenerationActivities({ db, writer }: GenerationDeps) {
  return {
    /** QUEUED → RUNNING, or the reason it cannot start (a cancel won the race, the job is gone). */
    async startGenerationJob(jobId: string): Promise<StartOutcome> {
      // The start's UPDATE itself checks the job-processing switch: one statement for a job
      // that starts; only one that stayed QUEUED reads the switch to learn why.
      const started = await startQueuedJob(db, jobId, 0.1, 'Writing the post', notPausedSql());
      if (started.running || started.status !== 'QUEUED') return started;
      // An operator paused job processing: stay QUEUED, and let Temporal retry this start
      // (docs/generation.md "Pausing job processing").
      const pause = await jobProcessingState(db);
      if (pause.paused) {
        await db('jobs')
          .where({ id: jobId, status: 'QUEUED' })
          .whereRaw(`coalesce(progress->>'message', '') <> ?`, [PAUSED_MESSAGE])
          .update({ progress: JSON.stringify(progressNow(0, PAUSED_MESSAGE)), updated_at: db.fn.now() });
        throw ApplicationFailure.retryable(`Job processing is paused${pause.reason ? `: ${pause.reason}` : ''}.`, PAUSED_ERROR_TYPE);
      }
      // Resumed between the two reads.
      return startQueuedJob(db, jobId, 0.1, 'Writing the post');
    },

    /**
     * One writer call. Its cost reaches the job row whether or not a post came out, so that
     * settlement charges what the provider billed for every attempt (retries included): a failed
     * call's here, a draft's with the draft, in the completion's final UPDATE.
     */
    async writeGenerationDraft(jobId: string): Promise<Draft> {
      const { attempt } = Context.current().info;
      // The attempt is counted and shown, and the job read, in one statement that requires RUNNING.
      const progress = JSON.stringify(progressNow(0.1, attempt > 1 ? `Writing the post (attempt ${attempt})` : 'Writing the post'));
      const counted = await db.raw(
        `with j as (
           update jobs set attempt_count = ?, updated_at = now(), progress = ?::jsonb
            where id = ? and status = 'RUNNING'
           returning input, workspace_id, project_id)
         select j.input, j.workspace_id, j.project_id, p.display_name, p.slug, ${workspaceRegconfigsSql('j.workspace_id')} as regconfigs
           from j left join projects p on p.id = j.project_id`,
        [attempt, progress, jobId],
      );
      // Not RUNNING (or gone): loadRunningJob answers why, as a non-retryable failure.
      const job = (counted.rows[0] as Awaited<ReturnType<typeof loadRunningJob>> | undefined) ?? (await loadRunningJob(db, jobId, []));
      const input = job.input as GenerationJobInput;
      const ctx = Context.current();
      // Grounding: the most relevant passages of the project's and workspace's knowledge, within
      // the token budget. Done here, in the activity, so the workflow stays deterministic.
      const grounding = await retrieveKnowledge(db, {
        workspaceId: job.workspace_id,
        projectId: job.project_id,
        text: input.sourceText,
        tokenBudget: config.knowledge.groundingTokenBudget,
        // Read with the attempt's count above; a job loaded by loadRunningJob reads them itself.
        ...(counted.rows[0] ? { regconfigs: (counted.rows[0] as { regconfigs: string[] }).regconfigs } : {}),
      });
      // The model may think for a minute without a word; the beat says the attempt is alive. It
      // is the only heartbeat: nothing reads a heartbeat's details, and a beat per writer step
      // (Temporal sends the first at once) was one more call to the server for every job.
      const alive = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
      try {
        const result = await writer.write(
          {
            sourceText: input.sourceText,
            language: input.language,
            contentType: input.contentType as ContentType,
            projectName: job.display_name || job.slug || undefined,
            ...(grounding.blocks.length ? { knowledge: grounding.blocks.map((b) => ({ title: b.title, text: b.text })) } : {}),
          },
          { signal: ctx.cancellationSignal },
        );
        return {
          content: result.content,
          title: result.title,
          costCents: result.costCents,
          ...(grounding.documentIds.length ? { knowledgeDocumentIds: grounding.documentIds } : {}),
        };
      } catch (err) {
        if (!isLlmError(err)) throw err;
        await chargeJob(db, jobId, err.costCents);
        throw ApplicationFailure.create({
          type: err.code,
          message: err.message,
          nonRetryable: !shouldRetry(err, attempt),
          nextRetryDelay: err.retryAfterMs ?? undefined,
          details: [{ status: err.status, providerCode: err.providerCode }],
        });
      } finally {
        clearInterval(alive);
      }
    },

    /**
     * The draft and DONE in one transaction that requires RUNNING (spec 3.1: generation never
     * schedules): the final UPDATE (which locks the job and checks its status and its project),
     * the draft's INSERT and one INSERT of both events (`post.created`, `job.completed`).
     */
    async completeGenerationJob(input: { jobId: string; draft: Draft }): Promise<CompleteOutcome> {
      return finishingJob(db, input.jobId, async (trx) => {
        const postId = newId('post');
        const finished = await finishRunningJob(trx, input.jobId, {
          status: 'DONE',
          costCents: input.draft.costCents,
          progress: progressNow(1, 'Done'),
          result: draftResult(trx, postId, input.draft),
        });
        if (finished) {
          const { job } = finished;
          const jobInput = job.input as GenerationJobInput;
          const events: OutboxEvent[] = [];
          // spec 3.2: a generated draft is never scheduled, so no workflow waits on it.
          await insertPost(
            trx,
            {
              id: postId,
              workspaceId: job.workspace_id,
              projectId: job.project_id!,
              content: input.draft.content,
              title: input.draft.title,
              contentType: jobInput.contentType,
              // The service named it from the opening line, so it stays a service-given name (spec 4.4 PATCH title).
              titleAuto: true,
              generationJobId: job.id,
            },
            events,
          );
          // spec 4.4 idea source: the draft links to its idea, which moves to in_production, in
          // the same transaction as the draft (docs/ideas.md).
          if (jobInput.source.type === 'idea' && jobInput.source.ideaId)
            await linkDraftToIdea(trx, job.workspace_id, jobInput.source.ideaId, postId);
          await emitEvents(trx, [...events, finished.event]);
          return { status: 'DONE', postId };
        }
        // Nothing changed: the job is not RUNNING, is gone, or its project is. Which, under its lock.
        const job = await lockJobWithProject(trx, input.jobId);
        if (!job) return { status: 'MISSING' };
        if (job.status === 'DONE') return { status: 'DONE', postId: job.result?.postId };
        if (job.status !== 'RUNNING') {
          // Ended while the writer worked (the reconciler failed it): the call was still billed.
          await chargeJob(trx, job.id, input.draft.costCents ?? 0);
          return { status: job.status };
        }
        // Only this job's own steps move it on from RUNNING, so a RUNNING job here has lost its project.
        if (job.live_project_id) throw new Error(`Job ${job.id} could not be completed though RUNNING with its project; retrying.`);
        await finishJob(trx, job.id, {
          status: 'FAILED',
          costCents: input.draft.costCents,
          progress: progressNow(job.progress?.progress ?? 0.9, 'Failed: the project was deleted'),
          errorCode: 'project_not_found',
          errorMessage: 'The project was deleted while the post was being written.',
        });
        return { status: 'FAILED' };
      });
    },

    /** The writer gave up: RUNNING (or, per spec 3.2, QUEUED) → FAILED with the writer's code. */
    async failGenerationJob(input: { jobId: string; errorCode: string; errorMessage: string }): Promise<{ status: JobStatus | 'MISSING' }> {
      return finishingJob(db, input.jobId, async (trx) => {
        const job = await lockJob(trx, input.jobId);
        if (!job) return { status: 'MISSING' };
        if (job.status !== 'RUNNING' && job.status !== 'QUEUED') return { status: job.status };
        await failLockedJob(trx, job, { code: input.errorCode, message: input.errorMessage });
        return { status: 'FAILED' };
      });
    },

    /**
     * The workflow itself was cancelled in Temporal. A QUEUED job becomes CANCELLED; a RUNNING one
     * cannot be cancelled (spec 3.2), so it ends FAILED rather than lingering as RUNNING forever.
     */
    async abandonGenerationJob(jobId: string): Promise<{ status: JobStatus | 'MISSING' }> {
      return finishingJob(db, jobId, async (trx) => {
        const job = await lockJob(trx, jobId);
        if (!job) return { status: 'MISSING' };
        if (job.status === 'QUEUED') {
          await finishJob(trx, job.id, { status: 'CANCELLED', progress: progressNow(0, 'Cancelled') });
          return { status: 'CANCELLED' };
        }
        if (job.status === 'RUNNING') {
          await failLockedJob(trx, job, { code: 'job_cancelled', message: 'The job was stopped by an operator while running.' });
          return { status: 'FAILED' };
        }
        return { status: job.status };
      });
    },
  };
}

export type GenerationActivities = ReturnType<typeof createGenerationActivities>;
