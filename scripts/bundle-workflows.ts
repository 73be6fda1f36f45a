// `npm run build` (after the type check): bundles the workflow code the way the worker does,
// so a workflow importing something the sandbox cannot load fails here rather than at start,
// and writes dist/workflow-bundle.js, which production workers load instead of bundling at
// start (workers/worker.ts, prebuiltBundlePath).
import { writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { PREBUILT_BUNDLE_PATH, workflowBundle } from '../workers/worker';

const out = PREBUILT_BUNDLE_PATH;
const { code } = await workflowBundle();
await mkdir(path.dirname(out), { recursive: true });
await writeFile(out, code);
console.log(`workflow bundle: ${out} (${Math.round(code.length / 1024)} KiB)`);
