import fs from 'node:fs';
import path from 'node:path';

// The workflow bundles a bench's workers load (the publishing and population benches),
// built in the bench's process, once, so the workers load them the way production workers load the
// build's (Dockerfile, WORKFLOW_BUNDLE_PATH) rather than each running webpack at start-up:
// webpack's allocations would otherwise sit in the measured worker's heap, and a restarted worker
// would spend its first seconds bundling.

/** Writes a workflow bundle to `file`: the service's (workers/worker.ts, untraced), or, given `workflowsPath`, a baseline's. */
export async function writeWorkflowBundle(file: string, workflowsPath?: string): Promise<string> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (workflowsPath) {
    const { bundleWorkflowCode } = await import('@temporalio/worker');
    const quiet = { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} } as never;
    fs.writeFileSync(file, (await bundleWorkflowCode({ workflowsPath, logger: quiet })).code);
  } else {
    const { workflowBundle } = await import('../../workers/worker');
    fs.writeFileSync(file, (await workflowBundle({ traced: false })).code);
  }
  return file;
}

/** The service's and the publishing baselines' bundles, `<prefix>-workflow-bundle.js` and `<prefix>-baseline-bundle.js` in `dir`. */
export async function buildWorkerBundles(dir: string, prefix = 'publishing'): Promise<{ service: string; baseline: string }> {
  return {
    service: await writeWorkflowBundle(path.join(dir, `${prefix}-workflow-bundle.js`)),
    baseline: await writeWorkflowBundle(
      path.join(dir, `${prefix}-baseline-bundle.js`),
      path.join(import.meta.dirname, 'baselineWorkflows.ts'),
    ),
  };
}
