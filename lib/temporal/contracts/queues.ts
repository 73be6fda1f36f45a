// The task queues of the service (docs/operations.md "Fairness between workspaces"). Everything
// runs on the deployment's queue (TEMPORAL_TASK_QUEUE) except the jobs someone started and waits
// for (generations, images, source and knowledge ingests): their workflows and activities run on
// the jobs queue beside it, whose worker takes WORKER_JOB_CONCURRENCY tasks at a time.
//
// Why: fairness orders only the tasks waiting in matching. A worker with the publish queue's 100
// slots took a workspace's 200 generations into its slots as they arrived, and ran them there
// first come, first served, sharing the process's event loop and database pool: a quiet
// workspace's one job waited 8× its lag alone (bench/README.md "fairness"). With few slots of its
// own the jobs' backlog waits in matching, where every workspace gets its turn, and a generation
// burst no longer takes slots a 9:00 publish needs.

/** The jobs queue beside the deployment's `taskQueue`. */
export function jobsQueue(taskQueue: string): string {
  return `${taskQueue}-jobs`;
}
