import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { config } from '../../lib/config';
import { closeDb } from '../../lib/db';
import { temporalAddress } from '../../lib/temporal/client';
import { installRuntime, workerTuning } from '../../workers/worker';

/**
 * The body of a bench's baseline worker (bench/publishing, bench/generation): the service's worker
 * settings (workers/worker.ts workerTuning), only the baseline's workflows and activities on its own
 * task queue, until SIGTERM/SIGINT. The workflows from the bundle the bench built, if any (as the
 * service's worker loads WORKFLOW_BUNDLE_PATH), else from `workflowsUrl`, bundled at start-up.
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
