// `npm run build` (after the type check): bundles the workflow code the way the worker does,
// so a workflow importing something the sandbox cannot load fails here rather than at start.
import { writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { workflowBundle } from '../workers/worker';

const out = path.resolve(import.meta.dirname, '..', '.data', 'workflow-bundle.js');
const { code } = await workflowBundle();
await mkdir(path.dirname(out), { recursive: true });
await writeFile(out, code);
console.log(`workflow bundle: ${out} (${Math.round(code.length / 1024)} KiB)`);
