// A workflow bundle built from a temporary copy of workflows/ with edits applied: the build a
// workflow change would ship, made on the fly for the replay gate's test (test/replay) and the
// rolling-deploy check, and never committed. The copy sits beside workflows/ at the repository
// root, so its relative imports (../lib, ../activities) and packages resolve exactly as the
// original's do; it is removed once bundled.
import { randomBytes } from 'node:crypto';
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleWorkflows } from '../workers/worker';

const ROOT = path.resolve(import.meta.dirname, '..');

export interface WorkflowEdit {
  /** A file under workflows/ ('publishPost.ts'). */
  file: string;
  /** Text that must occur exactly once in it, so an edit never silently misses after a refactor. */
  find: string;
  replace: string;
}

export async function bundleWorkflowVariant(edits: WorkflowEdit[]): Promise<WorkflowBundleWithSourceMap> {
  const dir = path.join(ROOT, `.workflow-variant-${process.pid}-${randomBytes(4).toString('hex')}`);
  await cp(path.join(ROOT, 'workflows'), dir, { recursive: true });
  try {
    for (const edit of edits) {
      const file = path.join(dir, edit.file);
      const source = await readFile(file, 'utf8');
      const at = source.indexOf(edit.find);
      if (at < 0 || source.indexOf(edit.find, at + 1) >= 0)
        throw new Error(`workflow variant: ${edit.file} must contain ${JSON.stringify(edit.find)} exactly once`);
      await writeFile(file, source.slice(0, at) + edit.replace + source.slice(at + edit.find.length));
    }
    return await bundleWorkflows(path.join(dir, 'index.ts'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
