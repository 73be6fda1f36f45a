import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { config } from '../../lib/config';
import { closeDb } from '../../lib/db';
import { temporalAddress } from '../../lib/temporal/client';
import { installRuntime, workerTuning } from '../../workers/worker';

/**
 * A bench's baseline worker (bench/publishing, bench/generation) until SIGTERM/SIGINT: the service's
 * workerTuning, only the baseline's workflows (from the bench's bundle if any, as the service loads
 * WORKFLOW_BUNDLE_PATH, else `workflowsUrl` bundled at start-up) and activities on its task queue.
 */
export async function runBaselineWorker(opts: {
  taskQueue: string;
  bundlePath: string | undefined;
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
  for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => worker.shutdown());
  await worker.run();
  await connection.close();
  await closeDb();
  process.exit(0);
}
