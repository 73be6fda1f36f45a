// `npm run build` (after the type check): bundles the workflow code the way the worker does,
// so a workflow importing something the sandbox cannot load fails here rather than at start,
// and writes dist/workflow-bundle.js, which production workers load instead of bundling at
// start (workers/worker.ts, prebuiltBundlePath).
import { writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { PREBUILT_BUNDLE_PATH, PREBUILT_TRACED_BUNDLE_PATH, workflowBundle } from '../workers/worker';

// Two bundles: the plain one, and the one with the OpenTelemetry workflow interceptors that a
// worker with tracing on loads (workers/worker.ts).
for (const [out, traced] of [
  [PREBUILT_BUNDLE_PATH, false],
  [PREBUILT_TRACED_BUNDLE_PATH, true],
] as const) {
  const { code } = await workflowBundle({ traced });
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(out, code);
  console.log(`workflow bundle: ${out} (${Math.round(code.length / 1024)} KiB)`);
}
