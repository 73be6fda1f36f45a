import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { config } from '../../lib/config';
import { closeDb } from '../../lib/db';
import { temporalAddress } from '../../lib/temporal/client';
import { installRuntime, workerTuning } from '../../workers/worker';

// The body of a bench's baseline worker (bench/publishing, bench/generation): the service's
// worker settings (workers/worker.ts workerTuning), only the baseline's workflows and activities
// on its own task queue, until SIGTERM/SIGINT.

export async function runBaselineWorker(opts: {
  taskQueue: string;
  /** A bundle the bench built (as the service's worker loads WORKFLOW_BUNDLE_PATH), if any. */
  bundlePath: string | undefined;
  /** The workflows' source, bundled by webpack at start-up when there is no bundle. */
  workflowsUrl: URL;
  activities: object;
}): Promise<never> {
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
  process.once('SIGTERM', () => worker.shutdown());
  process.once('SIGINT', () => worker.shutdown());
  await worker.run();
  await connection.close();
  await closeDb();
  process.exit(0);
}
