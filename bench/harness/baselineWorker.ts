import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { config } from '../../lib/config';
import { closeDb } from '../../lib/db';
import { temporalAddress } from '../../lib/temporal/client';
import { installRuntime, workerTuning } from '../../workers/worker';

type BaselineWorkerOptions = { taskQueue: string; bundlePath?: string; workflowsUrl: URL; activities: object };

/**
 * A bench's baseline worker (bench/publishing, bench/generation, bench/webhooks), not yet running: the
 * service's workerTuning, only the baseline's workflows (from the bench's bundle if any, as the service
 * loads WORKFLOW_BUNDLE_PATH, else `workflowsUrl` bundled at start-up) and activities on its task queue.
 */
export async function createBaselineWorker(opts: BaselineWorkerOptions) {
  installRuntime();
  const connection = await NativeConnection.connect({ address: temporalAddress() });
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: opts.taskQueue,
    ...(opts.bundlePath ? { workflowBundle: { codePath: opts.bundlePath } } : { workflowsPath: fileURLToPath(opts.workflowsUrl) }),
    activities: opts.activities,
    ...workerTuning(),
    shutdownGraceTime: '5 seconds',
  });
  return { worker, connection };
}

/** createBaselineWorker run as a process of its own, until SIGTERM/SIGINT. */
export async function runBaselineWorker(opts: BaselineWorkerOptions): Promise<never> {
  const { worker, connection } = await createBaselineWorker(opts);
  for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => worker.shutdown());
  await worker.run();
  await connection.close();
  await closeDb();
  process.exit(0);
}
