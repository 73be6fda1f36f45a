import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import {
  ErrorCode,
  McpError,
  type CallToolResult,
  type Request,
  type RequestId,
  type Result,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { ApiError } from '../../lib/errors';
import { JOB_COLUMNS, type JobRow, type JobStatus } from '../../lib/jobs/row';
import { presentJob, presentLiveJob, type Job } from '../../lib/presenters/jobs';
import { log } from '../../lib/logger';
import { Job as JobModel, McpTask } from '../../lib/models';
import type { AuthContext } from '../auth/context';
import { cancelJob } from '../operations/jobs/jobs';
import { keysetPage } from '../pagination';
import { runOperation } from '../pipeline/index';
import { requestInHand, subjectOf, type McpRequestAuth } from './auth';
import { asApiError, toolError } from './errors';

// MCP 2025-11-25 Tasks over the service's jobs (ARCHITECTURE.md: "An MCP task is a job: its
// state is the job row and its workflow, readable from any API process, never a door's
// memory"). The task id is the job id. A `mcp_tasks` row binds the job to the credential that
// asked for it (MCP tasks, Security: "receivers MUST bind tasks to [the authorization]
// context"): the credential's subject (the API key, or the OAuth client acting for one user,
// as sessions are bound, auth.ts subjectOf) within the workspace it acted in. Everything else
// (status, progress, result) is read from the job as get_job reads it, so a task created
// through one API process is read, awaited and cancelled through any other, and outlives
// restarts.
//
// This is the SDK's TaskStore (its Protocol answers tasks/get, tasks/result, tasks/list and
// tasks/cancel through it). Its methods carry a session id only; the credential of the request
// being handled is taken from auth.ts requestInHand.

/**
 * Suggested tasks/get cadence (MCP tasks: pollInterval). tasks/get counts against the workspace's reads (spec 8: 120/min): one task polled
 * at this pace takes a quarter of them.
 */
export const TASK_POLL_INTERVAL_MS = 2_000;
/** How often a waiting tasks/result reads its task when no end was announced (server.ts; a lost notification costs at most this). */
export const TASK_RESULT_RECHECK_MS = 10_000;
/** A task's lifetime when the request names none (MCP tasks: the receiver MAY override the requested ttl). */
export const TASK_TTL_DEFAULT_MS = 24 * 3600_000;
/** Shortest lifetime granted: a task outlives the jobs it wraps (generation, transcription) whatever a host asks. */
export const TASK_TTL_MIN_MS = 3600_000;
/** Longest lifetime granted (MCP tasks, Resource management: "enforce maximum ttl durations"). */
export const TASK_TTL_MAX_MS = 7 * 24 * 3600_000;

/** The lifetime granted for a requested one (null or absent: the default; never unlimited). */
export function grantedTtl(requested: number | null | undefined): number {
  if (requested === undefined || requested === null || !Number.isFinite(requested)) return TASK_TTL_DEFAULT_MS;
  return Math.min(Math.max(Math.round(requested), TASK_TTL_MIN_MS), TASK_TTL_MAX_MS);
}

/** Job status → task status (spec 2.12 statuses; MCP tasks "Task Status"). */
const TASK_STATUS: Record<JobStatus, Task['status']> = {
  QUEUED: 'working',
  RUNNING: 'working',
  DONE: 'completed',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
};

/** Whose tasks a request sees: the credential's subject in the workspace it acts in. */
export interface TaskScope {
  workspaceId: string;
  subject: string;
}

export function taskScopeOf(auth: AuthContext): TaskScope {
  return { workspaceId: auth.workspaceId, subject: subjectOf(auth) };
}

/** What a task row adds to its job. */
interface TaskColumns {
  ttl_ms: number;
  created_at: Date;
}

function statusMessage(job: Job): string {
  if (job.status === 'FAILED') return job.errorMessage ?? job.errorCode ?? 'The job failed.';
  if (job.status === 'CANCELLED') return 'The job was cancelled.';
  if (job.status === 'DONE') return job.progress?.message ?? 'Done';
  const p = job.progress;
  return p ? `${p.message} (${Math.round(p.progress * 100)} %)` : job.status;
}

/** The Task of a job (MCP tasks, Data Types). lastUpdatedAt: the job's last change or progress report. */
export function taskOf(task: TaskColumns, job: Job): Task {
  const times = [job.updatedAt, job.progress?.updatedAt, task.created_at.toISOString()].filter((t): t is string => !!t);
  return {
    taskId: job.id,
    status: TASK_STATUS[job.status],
    statusMessage: statusMessage(job),
    createdAt: task.created_at.toISOString(),
    lastUpdatedAt: times.reduce((a, b) => (Date.parse(a) >= Date.parse(b) ? a : b)),
    ttl: task.ttl_ms,
    pollInterval: TASK_POLL_INTERVAL_MS,
  };
}

/** The scope's live (unexpired) task rows. */
function tasksIn(scope: TaskScope) {
  return McpTask.forWorkspace(scope.workspaceId).where('mcp_tasks.subject', scope.subject).where('mcp_tasks.expires_at', '>', new Date());
}

type TaskJobRow = JobRow & { task_ttl_ms: number; task_created_at: Date };

/** The job of one task of the scope, with the task's columns; undefined when the scope has no such task. */
async function findTaskJob(scope: TaskScope, taskId: string): Promise<TaskJobRow | undefined> {
  if (typeof taskId !== 'string' || taskId.length > 100) return undefined;
  const row = await tasksIn(scope)
    .where('mcp_tasks.id', taskId)
    .join('jobs', (j) => j.on('jobs.id', 'mcp_tasks.id').andOn('jobs.workspace_id', 'mcp_tasks.workspace_id'))
    .select([...JOB_COLUMNS, 'mcp_tasks.ttl_ms as task_ttl_ms', 'mcp_tasks.created_at as task_created_at'])
    .first();
  return row as unknown as TaskJobRow | undefined;
}

const columnsOf = (row: TaskJobRow): TaskColumns => ({ ttl_ms: row.task_ttl_ms, created_at: row.task_created_at });

/** MCP tasks, Error Handling: an unknown, expired or someone else's task id, alike. */
function taskNotFound(): McpError {
  return new McpError(ErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
}

/**
 * A refusal of the service (spec 7.2) as the JSON-RPC error of a task method or of a
 * task-augmented call that could not create its task: -32602 for what the request can change,
 * -32603 for the service's own failures; `data` carries the fields a failed tool's structured
 * content has (spec 4.9), so an agent branches on the same `code`.
 */
export function taskRefusal(err: ApiError, requestId: string, prefix?: string): McpError {
  const data = toolError(err, requestId).structuredContent;
  return new McpError(
    err.status >= 500 ? ErrorCode.InternalError : ErrorCode.InvalidParams,
    prefix ? `${prefix}: ${err.message}` : err.message,
    data,
  );
}

/** The result a tool call that followed its job to the end answers (server.ts runToolCall), for tasks/result. */
type ToolResultOf = (body: Record<string, unknown>, requestId: string) => CallToolResult;

/** What the task-augmented tool call hands to createTask (CreateTaskOptions.context). */
export interface TaskCreation {
  job: Job;
  tool: string;
}

let lastSweep = 0;
const SWEEP_EVERY_MS = 60_000;

/** Expired task rows go (MCP tasks, Resource management: "clean up expired tasks promptly"); their jobs stay. */
function sweepExpired(): void {
  if (Date.now() - lastSweep < SWEEP_EVERY_MS) return;
  lastSweep = Date.now();
  void db()('mcp_tasks')
    .where('expires_at', '<=', new Date())
    .delete()
    .catch((err: Error) => log.warn('expired MCP tasks not removed', { err: err.message }));
}

/** Tasks of the scope, newest first, one page (api/pagination.ts keyset cursors, bound to the scope). */
export async function listTaskPage(scope: TaskScope, cursor: string | undefined): Promise<{ tasks: Task[]; nextCursor?: string }> {
  const page = await keysetPage<McpTask, McpTask>(tasksIn(scope).select('mcp_tasks.id', 'mcp_tasks.created_at', 'mcp_tasks.ttl_ms'), {
    limit: config.generation.jobListDefault,
    cursor,
    filters: { mcpTasks: scope.subject },
    table: 'mcp_tasks',
    present: (row) => row,
  });
  const ids = page.data.map((t) => t.id);
  const jobs = ids.length
    ? ((await JobModel.forWorkspace(scope.workspaceId).whereIn('jobs.id', ids).select(JOB_COLUMNS)) as unknown as JobRow[])
    : [];
  const byId = new Map(jobs.map((j) => [j.id, j]));
  const tasks = page.data.flatMap((t) => {
    const job = byId.get(t.id);
    return job ? [taskOf(t, presentJob(job))] : [];
  });
  return { tasks, ...(page.pagination.next_cursor ? { nextCursor: page.pagination.next_cursor } : {}) };
}

/**
 * The tasks of a scope that are still working or changed since `since`: what a status watch
 * (streamable.ts) compares with what it last told the client.
 */
export async function tasksChangedSince(scope: TaskScope, since: Date): Promise<Task[]> {
  const rows = (await tasksIn(scope)
    .join('jobs', (j) => j.on('jobs.id', 'mcp_tasks.id').andOn('jobs.workspace_id', 'mcp_tasks.workspace_id'))
    .where((q) => q.whereIn('jobs.status', ['QUEUED', 'RUNNING']).orWhere('jobs.updated_at', '>=', since))
    .select([...JOB_COLUMNS, 'mcp_tasks.ttl_ms as task_ttl_ms', 'mcp_tasks.created_at as task_created_at'])) as unknown as TaskJobRow[];
  return rows.map((row) => taskOf(columnsOf(row), presentJob(row)));
}

/**
 * The SDK's TaskStore over jobs. One instance serves every session: a task belongs to a
 * credential, not to a session, so the session id the SDK passes is not consulted.
 */
export class JobTaskStore implements TaskStore {
  constructor(private readonly toolResult: ToolResultOf) {}

  private scope(): { request: McpRequestAuth; scope: TaskScope } {
    const request = requestInHand();
    return { request, scope: taskScopeOf(request.auth) };
  }

  /**
   * The SDK answers what a store method throws with its message: a protocol error passes as
   * it is, a refusal of the service as its JSON-RPC form, and anything unexpected as a generic
   * internal error (logged with its stack, never shown; CONVENTIONS habit 3).
   */
  private async guarded<T>(method: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof McpError) throw err;
      const requestId = this.scope().request.requestId;
      throw taskRefusal(asApiError(err, { requestId, taskMethod: method }), requestId);
    }
  }

  createTask(taskParams: CreateTaskOptions, _requestId: RequestId, _request: Request): Promise<Task> {
    return this.guarded('createTask', () => this.create(taskParams));
  }

  private async create(taskParams: CreateTaskOptions): Promise<Task> {
    const { job, tool } = taskParams.context as unknown as TaskCreation;
    const { scope } = this.scope();
    const ttl = grantedTtl(taskParams.ttl);
    // The same job asked for again by the same credential (an idempotent replay, the same file)
    // is the same task: its first lifetime stands.
    await McpTask.query()
      .insert({
        id: job.id,
        subject: scope.subject,
        workspace_id: scope.workspaceId,
        tool,
        ttl_ms: ttl,
        expires_at: new Date(Date.now() + ttl),
      })
      .onConflict(['id', 'subject'])
      .ignore();
    sweepExpired();
    const row = await findTaskJob(scope, job.id);
    if (!row) throw taskNotFound();
    return taskOf(columnsOf(row), job);
  }

  getTask(taskId: string): Promise<Task | null> {
    return this.guarded('getTask', async () => {
      const row = await findTaskJob(this.scope().scope, taskId);
      // A running job shows its workflow's progress, as get_job does (spec 4.8).
      return row ? taskOf(columnsOf(row), await presentLiveJob(row)) : null;
    });
  }

  getTaskResult(taskId: string): Promise<Result> {
    return this.guarded('getTaskResult', async () => {
      const { request, scope } = this.scope();
      const row = await findTaskJob(scope, taskId);
      if (!row) throw taskNotFound();
      // MCP tasks: "exactly what the underlying request would have returned", the final job as
      // a call that followed it answers (docs/mcp.md "Progress").
      return this.toolResult({ data: presentJob(row) }, request.requestId);
    });
  }

  /** Results are the jobs' own, written by the workers; nothing in the door stores one. */
  async storeTaskResult(): Promise<void> {
    throw new Error('MCP task results are the jobs’ own');
  }

  /**
   * tasks/cancel (the SDK has checked the task exists and is not terminal). The job's cancel
   * rule decides, through the same operation as cancel_job and REST (spec 3.2: only a QUEUED
   * job cancels); a job that already runs cannot be cancelled, answered -32602 as the tasks
   * spec answers a task that cannot be cancelled.
   */
  updateTaskStatus(taskId: string, status: Task['status']): Promise<void> {
    return this.guarded('updateTaskStatus', async () => {
      if (status !== 'cancelled') throw new McpError(ErrorCode.InvalidRequest, `A task of this server does not move to ${status}.`);
      const { request } = this.scope();
      try {
        await runOperation({
          op: cancelJob,
          requestId: request.requestId,
          apiVersion: request.apiVersion,
          authenticate: async () => request.auth,
          input: () => ({ jobId: taskId }),
          idempotencyScope: { operation: 'MCP tasks/cancel', hashSubject: 'tasks/cancel' },
        });
      } catch (err) {
        if (err instanceof ApiError && err.code === 'not_found') throw taskNotFound();
        if (err instanceof ApiError) throw taskRefusal(err, request.requestId, 'Cannot cancel task');
        throw err;
      }
    });
  }

  listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    return this.guarded('listTasks', () => listTaskPage(this.scope().scope, cursor));
  }
}

/** How far back a watch looks for finished jobs: updated_at is its transaction's start, which may precede the commit. */
const WATCH_LOOKBACK_MS = 10_000;

/**
 * notifications/tasks/status (MCP tasks: receivers MAY send them; requestors MUST NOT rely on
 * them) for one session whose standalone stream (GET /mcp) is open in this process. A job's
 * status is changed by a worker, not by this door, so the SDK's own notifications (sent when
 * its store is written in-process) never fire; instead the process holding the stream reads
 * the session's tasks every poll interval and tells each status change it sees, whichever
 * process created the task. The task's creation is not a change (its answer said `working`);
 * the first read only learns what is there. Answers the function that stops the watch.
 */
export function watchTaskStatus(scope: () => TaskScope, notify: (task: Task) => Promise<void>): () => void {
  const known = new Map<string, Task['status']>();
  let first = true;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    const since = new Date(Date.now() - WATCH_LOOKBACK_MS);
    try {
      const tasks = await tasksChangedSince(scope(), since);
      const seen = new Set<string>();
      for (const task of tasks) {
        seen.add(task.taskId);
        const before = known.get(task.taskId);
        known.set(task.taskId, task.status);
        if (first || before === task.status || (before === undefined && task.status === 'working')) continue;
        if (stopped) return;
        await notify(task);
      }
      // Finished tasks leave the read once the lookback has passed them.
      for (const id of known.keys()) if (!seen.has(id)) known.delete(id);
      first = false;
    } catch (err) {
      log.debug('task status watch', { err: err instanceof Error ? err.message : String(err) });
    } finally {
      if (!stopped) timer = setTimeout(tick, TASK_POLL_INTERVAL_MS).unref();
    }
  };
  void tick();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
