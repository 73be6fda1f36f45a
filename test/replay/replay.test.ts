import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../../workers/worker';

// Every recorded history under histories/ must replay against the current workflow code
// (CONVENTIONS.md habit 8): a change that breaks determinism fails here, in CI.
const dir = path.join(import.meta.dirname, 'histories');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort();

describe('workflow replay over recorded histories', function () {
  this.timeout(120_000);

  it('has recorded histories to replay', () => {
    assert.ok(files.length > 0, 'no histories under test/replay/histories');
  });

  for (const file of files) {
    it(`replays ${file}`, async () => {
      const history = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
      const workflowId = path.basename(file, '.json');
      await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, workflowId);
    });
  }
});
