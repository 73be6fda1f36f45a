import { z } from 'zod';
import { config } from '../../../lib/config';
import { afterCommit, db, readPrepared, shapedRead, TIMESTAMPS_AS_ISO, type WithIsoInstants } from '../../../lib/db';
import { errors } from '../../../lib/errors';
import { finishJob } from '../../../lib/jobs/finish';
import { JOB_STATUSES, progressNow, type JobRow } from '../../../lib/jobs/row';
import { JOB_TYPES } from '../../../lib/jobs/kinds';
import { presentJob, presentLiveJob, type Job } from '../../../lib/presenters/jobs';
import { settleJobSpend } from '../../../lib/spend/settlement';
import { cancelJobWorkflow } from '../../../lib/temporal/start/jobs';
import { Job as JobModel, reachParams, reachShape, reachValues } from '../../../lib/models';
import { jobSchema, getJobInput, cancelJobInput, id } from './schema';
import { page, single } from '../../output';
import { defineOperation } from '../../operation';
import { keysetClauses, keysetPage, paginationInput, parseLimit } from '../../pagination';
import type { CursorPosition } from '../../../lib/tokens';
import { findJob, jobsOf } from './queries';
import { checkProjectFilter } from '../projects/resolve';

// spec 4.8 jobs. REST accepts any valid token of the workspace (spec 4.1); the agent tools
// list_jobs/get_job need jobs:read and cancel_job needs jobs:cancel (spec 4.9), a rule for the
// MCP door to apply. Client-role accounts are refused (spec 5.4: jobs are not in the client view).

export const listJobsInput = z
  .object({
    status: z
      .string()
      .max(200)
      .optional()
      .refine((s) => s === undefined || s.split(',').every((v) => (JOB_STATUSES as readonly string[]).includes(v.trim())), {
        message: `unknown status; use a comma-separated list of ${JOB_STATUSES.join(', ')}`,
      }),
    type: z
      .string()
      .max(40)
      .optional()
      .refine((t) => t === undefined || (JOB_TYPES as readonly string[]).includes(t), {
        message: `unknown type; one of ${JOB_TYPES.join(', ')}`,
      }),
    projectId: id.optional(),
    ...paginationInput,
  })
  .strict();

type JobsPageParam = 'workspaceId' | 'projectIds' | 'statuses' | 'type' | 'projectId' | 'cursorCreatedAt' | 'cursorId';

/**
 * The jobs list's page (GET /v1/jobs), by shape: how many projects the reader is narrowed to
 * (null: every project), how many statuses filter it, whether a type and a project do, whether a
 * cursor positions it, the page size.
 */
const jobsPage = shapedRead(
  (
    shape: { projects: number | null; statuses: number | null; type: boolean; project: boolean; cursor: boolean; limit: number },
    param: (name: JobsPageParam, index?: number) => string,
  ) => {
    const q = jobsOf(reachParams(shape.projects, param));
    if (shape.statuses !== null)
      q.whereIn(
        'jobs.status',
        Array.from({ length: shape.statuses }, (_, i) => param('statuses', i)),
      );
    if (shape.type) q.where('jobs.type', param('type'));
    if (shape.project) q.where('jobs.project_id', param('projectId'));
    const pos = shape.cursor ? { createdAt: param('cursorCreatedAt'), id: param('cursorId') } : null;
    return keysetClauses(q.toKnexQuery(), pos, shape.limit, 'jobs');
  },
);

export const listJobs = defineOperation({
  name: 'jobs.list',
  summary: 'List jobs, newest first; filter by status (comma-separated), type and projectId.',
  kind: 'read',
  scopes: 'any',
  clientRole: 'deny',
  input: listJobsInput,
  output: page(jobSchema),
  handler: async ({ auth }, input) => {
    const limit = parseLimit(input.limit, config.generation.jobListDefault, config.generation.jobListMax);
    const statuses = input.status?.split(',').map((s) => s.trim());
    // spec 1 rule 1: a project of another workspace is not found, never an empty page.
    await checkProjectFilter(auth, input.projectId);
    // A cursor is only valid under the filters it was minted with (spec 4.4: else 400 bad_cursor).
    const filters = { status: statuses?.slice().sort().join(','), type: input.type, projectId: input.projectId };
    // As the post list reads its page: compiled once per shape, plain rows from a prepared
    // statement, the instants as ISO strings cut from Postgres' text.
    const read = (pos: CursorPosition | null) =>
      readPrepared<WithIsoInstants<JobRow>>(
        jobsPage(
          {
            projects: reachShape(auth),
            statuses: statuses?.length ?? null,
            type: input.type !== undefined,
            project: input.projectId !== undefined,
            cursor: pos !== null,
            limit,
          },
          {
            ...reachValues(auth),
            statuses,
            type: input.type,
            projectId: input.projectId,
            cursorCreatedAt: pos?.createdAt,
            cursorId: pos?.id,
          },
        ),
        { types: TIMESTAMPS_AS_ISO },
      );
    return keysetPage<WithIsoInstants<JobRow>, Job>(read, { limit, cursor: input.cursor, filters, table: 'jobs', present: presentJob });
  },
});

export const getJob = defineOperation({
  name: 'jobs.get',
  summary: 'One job with its progress snapshot.',
  kind: 'read',
  scopes: 'any',
  clientRole: 'deny',
  input: getJobInput,
  output: single(jobSchema),
  handler: async ({ auth }, input) => {
    const row = await findJob(auth, input.jobId);
    if (!row) throw errors.notFound('job');
    return { data: await presentLiveJob(row) };
  },
});

export const cancelJob = defineOperation({
  name: 'jobs.cancel',
  summary: 'Cancel a QUEUED job; cancelling a cancelled job answers it again, any other status is 409.',
  kind: 'write',
  scopes: 'any',
  clientRole: 'deny',
  input: cancelJobInput,
  output: single(jobSchema),
  // Cancelling a job that already runs or ended (spec 4.8: only QUEUED jobs cancel).
  errors: ['conflict'],
  handler: async ({ auth }, input) => {
    if (!(await findJob(auth, input.jobId))) throw errors.notFound('job');
    // spec 3.2: only QUEUED → CANCELLED, as a compare-and-set under the row lock; the worker's
    // QUEUED → RUNNING is the other side of the same race, so exactly one of the two wins.
    const cancelled = await db().transaction(async (trx) => {
      const locked = await JobModel.forWorkspace(auth.workspaceId, trx).findById(input.jobId).select('status').forUpdate();
      if (locked?.status !== 'QUEUED') return null;
      const job = await finishJob(trx, input.jobId, { status: 'CANCELLED', progress: progressNow(0, 'Cancelled') });
      // The reservation released (cost 0, docs/generation.md) with the cancel, last.
      await settleJobSpend(trx, input.jobId);
      return job;
    });
    if (cancelled) {
      // After the cancel's COMMIT (the request's, when it is a unit of work: lib/db.ts) the
      // workflow is told; one that misses the cancel finds its job CANCELLED at its first step.
      await afterCommit(() => cancelJobWorkflow(input.jobId));
      return { data: presentJob(cancelled) };
    }
    const current = await findJob(auth, input.jobId);
    if (!current) throw errors.notFound('job');
    // Cancelling twice is safe (spec 3.2): the cancelled job is answered again, unchanged.
    if (current.status === 'CANCELLED') return { data: presentJob(current) };
    // A running or finished job is not cancelled, and a 200 would read as if it had been.
    throw errors.conflict(`Only a QUEUED job can be cancelled; this job is ${current.status}.`, {
      reason: 'job_not_cancellable',
      status: current.status,
      retryable: false,
    });
  },
});
