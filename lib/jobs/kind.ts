import type { WorkflowName } from '../temporal/contracts/workflowName';
import type { WorkKind } from '../temporal/contracts/priority';

// What a job kind declares (docs/contributing.md "A job kind"): one file per kind under
// ./kinds/, listed in ./kinds/index.ts. Everything generic about a job (its row and states,
// ./row.ts; its final state, ./finish.ts; the enqueue path and the reconciler, ./queue.ts and
// ./reconcile.ts; the spend meters, lib/spend/) reads the kind from that registry, so a new kind
// touches no generic file.

/** The ids of a job, as its workflow's start reads them; a workspace-wide job has no project. */
export interface JobIds {
  id: string;
  workspace_id: string;
  project_id: string | null;
}

export interface JobKind<Type extends string, Input extends object> {
  /** The `jobs.type` value, the Job resource's `type` (spec 2.12) and the `GET /v1/jobs` filter. */
  type: Type;
  /** The workflow that runs it (one per job, id = job id; lib/temporal/contracts/jobs.ts). */
  workflow: WorkflowName;
  /** What its failures to start are logged as ("<label> workflow could not be started"). */
  label: string;
  /** The cents it reserves on the spend meters until its real cost is known (lib/spend/reservations.ts). */
  reserveCents(): number;
  /** Its task queue priority and what the Temporal UI shows for its workflow (lib/temporal/start/jobs.ts). */
  describe(job: JobIds): { kind: WorkKind; summary: string; details?: string };
  /** Type only: the request the job row keeps in `input` (QueueJob checks it); never read at run time. */
  readonly input?: Input;
}

/** Declares a job kind; `Input` is the shape `enqueueJob` accepts for it. */
export function defineJobKind<Input extends object>() {
  return <Type extends string>(kind: JobKind<Type, Input>): JobKind<Type, Input> => kind;
}
