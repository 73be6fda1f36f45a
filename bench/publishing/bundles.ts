import fs from 'node:fs';
import path from 'node:path';

// The workflow bundles a bench's workers load (the publishing and population benches).

/**
 * Builds the service's and the baselines' workflow bundles in this process, once, so the workers
 * load them the way production workers load the build's (Dockerfile, WORKFLOW_BUNDLE_PATH) rather
 * than each running webpack at start-up: webpack's allocations would otherwise sit in the
 * measured worker's heap, and a restarted worker would spend its first seconds bundling.
 * `prefix` names the files in `dir` (`<prefix>-workflow-bundle.js`, `<prefix>-baseline-bundle.js`).
 */
export async function buildWorkerBundles(dir: string, prefix = 'publishing'): Promise<{ service: string; baseline: string }> {
  const { workflowBundle } = await import('../../workers/worker');
  const { bundleWorkflowCode } = await import('@temporalio/worker');
  const quiet = { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} } as never;
  const service = path.join(dir, `${prefix}-workflow-bundle.js`);
  const baseline = path.join(dir, `${prefix}-baseline-bundle.js`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(service, (await workflowBundle({ traced: false })).code);
  const base = await bundleWorkflowCode({ workflowsPath: path.join(import.meta.dirname, 'baselineWorkflows.ts'), logger: quiet });
  fs.writeFileSync(baseline, base.code);
  return { service, baseline };
}
