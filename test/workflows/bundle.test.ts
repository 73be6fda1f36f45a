import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { randomBase62 } from '../../lib/ids';
import { prebuiltBundlePath, workflowBundle } from '../../workers/worker';
import { generatePostWorkflow } from '../../workflows/generatePost';
import { workflowEnv } from '../support/workflowEnv';

// Production workers load the build's workflow bundle; everywhere else the source is bundled at
// start, so a stale bundle can never run old workflow code (workers/worker.ts, docs/development.md).
describe('pre-built workflow bundle', function () {
  this.timeout(60_000);
  let dir: string;
  let built: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'workflow-bundle-'));
    built = path.join(dir, 'workflow-bundle.js');
    await writeFile(built, (await workflowBundle()).code);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('is used in production when the build wrote it, and never in development or tests', () => {
    assert.equal(prebuiltBundlePath({ env: 'production', explicit: undefined, builtPath: built }), built);
    assert.equal(
      prebuiltBundlePath({ env: 'production', explicit: undefined, builtPath: path.join(dir, 'missing.js') }),
      null,
      'no build: bundle at start',
    );
    assert.equal(prebuiltBundlePath({ env: 'development', explicit: undefined, builtPath: built }), null);
    assert.equal(prebuiltBundlePath({ env: 'test', explicit: undefined, builtPath: built }), null);
    assert.equal(prebuiltBundlePath(), null, 'this test run bundles its source');
  });

  it('WORKFLOW_BUNDLE_PATH names one explicitly, and a missing one is an error, not a silent rebuild', () => {
    assert.equal(prebuiltBundlePath({ env: 'development', explicit: built, builtPath: '/nowhere.js' }), built);
    assert.throws(
      () => prebuiltBundlePath({ env: 'production', explicit: path.join(dir, 'missing.js'), builtPath: built }),
      /WORKFLOW_BUNDLE_PATH .* does not exist/,
    );
  });

  it('a worker runs workflows from the built file', async () => {
    const env = await workflowEnv();
    const taskQueue = `bundle-${randomBase62(8)}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: built },
      activities: {
        async startGenerationJob() {
          return { running: false, status: 'CANCELLED' };
        },
      },
    });
    const result = await worker.runUntil(
      env.client.workflow.execute(generatePostWorkflow, {
        taskQueue,
        workflowId: `bundle-${taskQueue}`,
        args: [{ jobId: 'job_bundle', workspaceId: 'ws', projectId: 'proj' }],
      }),
    );
    assert.deepEqual(result, { status: 'CANCELLED' });
  });
});
