import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { PublishOutcome } from '../../activities/publishing';
import type { ScheduleSnapshot } from '../../lib/publishing/schedule';
import { runCli } from '../../tooling/replay';
import { bundleWorkflowVariant, type WorkflowEdit } from '../../tooling/workflowVariant';
import { PATCH_CARRIED, publishPostWorkflow, publishStatusQuery } from '../../workflows/publishPost';
import { waitFor } from '../support/wait';
import { withWorker } from '../support/workflowEnv';

// The replay gate, `npm run replay -- --from-server` (docs/operations.md "Deploying workflow
// changes"): real publish workflows run on a Temporal server, then the gate replays their
// histories from that server's visibility store against the real code (passes), against a build
// whose publish workflow reads the row before anything else without patched() (fails, naming
// the run), and against the same change behind patched() (passes).

const EXTRA_READ = 'const carriedPath = patched(PATCH_CARRIED);\n';
const unpatchedRead: WorkflowEdit = {
  file: 'publishPost.ts',
  find: EXTRA_READ,
  replace: `${EXTRA_READ}  await loadSchedule(input.postId);\n`,
};
const patchedRead: WorkflowEdit = {
  file: 'publishPost.ts',
  find: EXTRA_READ,
  replace: `${EXTRA_READ}  if (patched('replay-gate-test-extra-read')) await loadSchedule(input.postId);\n`,
};

const scheduledAt = (atMs: number): ScheduleSnapshot => ({
  status: 'scheduled',
  version: 1,
  scheduledAtMs: atMs,
  delaySeconds: 0,
  retryWindowSeconds: 60,
  retryBaseSeconds: 1,
});

describe('replay gate over a server’s histories (npm run replay -- --from-server)', function () {
  this.timeout(180_000);

  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'replay-gate-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('passes on the real code, fails naming the run on an unpatched change, passes with the change behind patched()', async () => {
    const activities = {
      async loadSchedule(): Promise<ScheduleSnapshot | null> {
        throw new Error('the carried schedule makes the row read unnecessary');
      },
      async publishPost(): Promise<PublishOutcome> {
        return { outcome: 'published', postUrn: 'urn:li:share:gate', already: false };
      },
    };
    // One run published and closed, one asleep on its timer (what the new workers would pick up).
    const { address, taskQueue, sleepingId } = await withWorker(activities, async (ctx) => {
      const start = (postId: string, atMs: number) =>
        ctx.client.workflow.start(publishPostWorkflow, {
          taskQueue: ctx.taskQueue,
          workflowId: `publish-${postId}-${ctx.taskQueue}`,
          args: [{ postId, schedule: scheduledAt(atMs) }],
        });
      const published = await start('post_gate_published', Date.now() + 300);
      const sleeping = await start('post_gate_sleeping', Date.now() + 3_600_000);
      assert.deepEqual(await published.result(), { outcome: 'published', postUrn: 'urn:li:share:gate' });
      await waitFor(async () => (await sleeping.query(publishStatusQuery)).state === 'waiting', 20_000, 'the sleeping run armed its timer');
      // Visibility is eventually consistent: wait until the listing the gate uses shows both.
      await waitFor(
        async () => (await ctx.client.workflow.count(`TaskQueue = '${ctx.taskQueue}'`)).count === 2,
        20_000,
        'both runs in visibility',
      );
      return { address: ctx.env.address, taskQueue: ctx.taskQueue, sleepingId: sleeping.workflowId };
    });
    const gate = (...extra: string[]) =>
      runCli(['--from-server', '--address', address, '--namespace', 'default', '--task-queue', taskQueue, ...extra], () => {});

    const real = await gate();
    assert.equal(real.code, 0, real.lines.join('\n'));
    assert.ok(real.lines.includes('ok   publishPostWorkflow: 2 replayed'), real.lines.join('\n'));
    // Every run of each type, and a bound per type.
    const all = await gate('--per-type', 'all');
    assert.ok(all.lines.includes('ok   publishPostWorkflow: 2 replayed'), all.lines.join('\n'));
    const one = await gate('--per-type', '1');
    assert.ok(one.lines.includes('ok   publishPostWorkflow: 1 replayed'), one.lines.join('\n'));

    const broken = path.join(dir, 'unpatched.js');
    await writeFile(broken, (await bundleWorkflowVariant([unpatchedRead])).code);
    const caught = await gate('--bundle', broken);
    assert.equal(caught.code, 1, caught.lines.join('\n'));
    assert.ok(caught.lines.includes('FAIL publishPostWorkflow: 2 replayed, 2 nondeterministic'), caught.lines.join('\n'));
    const named = caught.lines.find((l) => l.startsWith(`nondeterminism in publishPostWorkflow ${sleepingId} `));
    assert.ok(named, caught.lines.join('\n'));
    assert.match(named, /nondetermin/i, 'the SDK’s nondeterminism message is printed');

    const patched = path.join(dir, 'patched.js');
    await writeFile(patched, (await bundleWorkflowVariant([patchedRead])).code);
    const guarded = await gate('--bundle', patched);
    assert.equal(guarded.code, 0, guarded.lines.join('\n'));

    // The patch-removal listing: the sleeping run recorded the carried-schedule patch.
    const usage = await gate('--uses-patch', PATCH_CARRIED);
    assert.equal(usage.code, 0, usage.lines.join('\n'));
    assert.ok(
      usage.lines.includes(`publishPostWorkflow: 1 open runs recorded ${PATCH_CARRIED}, 0 recorded it deprecated, 0 did not`),
      usage.lines.join('\n'),
    );
  });

  it('refuses to pass on a server where it finds nothing to replay', async () => {
    const { address } = await withWorker({}, async (ctx) => ({ address: ctx.env.address }));
    const empty = await runCli(['--from-server', '--address', address, '--task-queue', 'no-such-queue'], () => {});
    assert.equal(empty.code, 1);
    assert.match(empty.lines.join('\n'), /no workflow runs/);
  });
});
