import assert from 'node:assert/strict';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { workflowMetadataQuery } from '@temporalio/workflow';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { temporalClient, workflowIds } from '../../lib/temporal/client';
import { zonedTime } from '../../lib/temporal/details';
import { freePort } from '../../tooling/ports';
import { resolveTemporalUiServerBinary, startTemporalUi, type TemporalUi } from '../../tooling/temporalCluster';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { connectedPersonalProject } from '../support/network';
import { apiAndWorker } from '../support/stack';
import { findPostWorkflowInUi } from '../support/temporalUi';
import { inSeconds } from '../support/time';
import { waitFor } from '../support/wait';

// What an operator reads about a post in the Temporal UI (docs/operations.md "What the workflows
// show"): the UI server of the cluster tier (tooling/temporalCluster.ts startTemporalUi) in front
// of the tests' dev server, opened in the real Chromium of the browser tests. The post is
// scheduled through the API in a project whose calendar is in Tokyo, so the times the workflow
// shows are checked in the post's zone, not the server's.

const ZONE = 'Asia/Tokyo';

function decode(payload: Payload | null | undefined): unknown {
  return payload ? defaultPayloadConverter.fromPayload(payload) : undefined;
}

describe('the Temporal UI shows a post’s publish workflow (ui-server against the dev server, headless Chromium)', function () {
  this.timeout(180_000);
  const stack = apiAndWorker();
  let ui: TemporalUi;
  let browser: TestBrowser;

  before(async () => {
    ui = await startTemporalUi({
      binary: await resolveTemporalUiServerBinary({ log: (l) => console.log(`[temporal-ui] ${l}`) }),
      frontendAddress: config.temporalAddress!,
      port: await freePort(),
      namespace: config.temporalNamespace,
      log: () => undefined,
    });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await ui?.stop();
  });

  it('finds the workflow by its PostId and shows its summary, what it waits for and until when in the post’s zone, and its timer', async () => {
    const { project } = await connectedPersonalProject(stack.ws.workspace.id, { timezone: ZONE });
    const created = await stack.call('POST', '/v1/posts', {
      body: { projectId: project.id, content: 'Seen from the operator side', scheduledFor: inSeconds(7200) },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id: string = created.body.data.id;
    // A new post's workflow waits in its start delay without running; a move earlier runs its
    // first task, which arms the timer and says what it waits for.
    const moved = await stack.call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: inSeconds(3600) } });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    const fireAtMs = Date.parse(moved.body.data.scheduledAt) + config.publish.delaySeconds * 1000;
    const waitingAt = `Waiting to publish at ${zonedTime(fireAtMs, ZONE)}`;
    assert.match(waitingAt, /Asia\/Tokyo \(GMT\+09:00\)/);

    const handle = (await temporalClient()).workflow.getHandle(workflowIds.publish(id));
    const metadata = await waitFor(
      async () => {
        const m = await handle.query(workflowMetadataQuery);
        return m.currentDetails?.startsWith(waitingAt) && m;
      },
      30_000,
      'the current details of the waiting workflow',
    );
    assert.match(
      metadata.currentDetails!,
      /Schedule version \d+; a move earlier wakes it, a later one or taking it off the schedule is read when it wakes\./,
    );
    assert.equal(await (await handle.describe()).staticSummary(), `Publish post ${id}`);
    const timers = ((await handle.fetchHistory()).events ?? []).filter((e) => e.timerStartedEventAttributes);
    assert.equal(timers.length, 1, 'one durable timer');
    const timerSummary = decode(timers[0]!.userMetadata?.summary);
    assert.match(
      String(timerSummary),
      new RegExp(`^Publish time ${zonedTime(fireAtMs, ZONE).replace(/[()+]/g, '\\$&')} \\(schedule version \\d+\\)$`),
    );

    const seen = await findPostWorkflowInUi(browser.context, {
      uiUrl: ui.url,
      namespace: config.temporalNamespace,
      postId: id,
      expect: [`Publish post ${id}`, waitingAt, String(timerSummary)],
    });
    assert.ok(seen.list.includes('publishPostWorkflow'), 'the list shows the workflow type');
    await seen.page.close();

    // Taken off the schedule an hour before its time: the workflow is left asleep (it reads the
    // row when it wakes), so it still shows what it was armed for, and the row counts it as told.
    const unscheduled = await stack.call('PATCH', `/v1/posts/${id}`, { body: { scheduledFor: null } });
    assert.equal(unscheduled.status, 200, JSON.stringify(unscheduled.body));
    const row = await db()('posts').where({ id }).first('status', 'schedule_version', 'workflow_synced_version');
    assert.equal(row.status, 'draft');
    assert.equal(row.workflow_synced_version, row.schedule_version);
    assert.equal((await handle.describe()).status.name, 'RUNNING');
    assert.ok((await handle.query(workflowMetadataQuery)).currentDetails?.startsWith(waitingAt));
  });
});
