// Incident controls over generation (issue 12): pausing job processing and scripted LLM faults,
// each run through bin/admin in its own process against the generation harness (the real API,
// an in-process worker, the LLM simulator as a real HTTP server).

import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { client } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { generationBody, startHarness, waitForJob, type Harness } from '../generation/support';
import { fails, ok } from '../support/admin';

describe('operator commands for generation (bin/admin jobs, llm)', function () {
  this.timeout(300_000);
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    h.stub.reset();
    // The switch is service-wide: never leave it on for the suites that run after this one.
    await db()('service_flags').where({ key: 'jobs_paused' }).delete();
  });
  after(async () => {
    await h.close();
  });

  async function fresh() {
    const ws = await workspaceWithKey();
    return { ...ws, call: client(h.api.url, ws.key) };
  }

  it('pauses job processing: new jobs stay QUEUED until resumed, then complete', async () => {
    const { call, project } = await fresh();
    const paused = await ok(['jobs', 'pause', '--reason', 'provider incident']);
    assert.deepEqual([paused.paused, paused.reason], [true, 'provider incident']);
    assert.ok(paused.since);

    const created = await call('POST', '/v1/posts/generations', { body: generationBody(project.id) });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const jobId = created.body.data.id;
    // Several start attempts (1 s, 2 s, 4 s back-off) fall inside this window.
    await sleep(5_000);
    const waiting = await call('GET', `/v1/jobs/${jobId}`);
    assert.equal(waiting.body.data.status, 'QUEUED');
    assert.match(waiting.body.data.progress.message, /paused/);
    assert.equal(h.stub.requests.filter((r) => r.path === '/v1/chat/completions').length, 0, 'no writer call while paused');
    const status = await ok(['jobs', 'status']);
    assert.equal(status.paused, true);
    assert.ok(status.queued >= 1);

    // A waiting job can still be cancelled, as any QUEUED job.
    const second = (await call('POST', '/v1/posts/generations', { body: generationBody(project.id) })).body.data.id;
    const cancelled = await call('POST', `/v1/jobs/${second}/cancel`);
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.equal(cancelled.body.data.status, 'CANCELLED');

    const resumed = await ok(['jobs', 'resume']);
    assert.deepEqual([resumed.paused, resumed.reason, resumed.since], [false, null, null]);
    // The next start attempt is at most 30 s away (the activity's maximum retry interval).
    const done = await waitForJob(jobId, (s) => s !== 'QUEUED' && s !== 'RUNNING', 60_000);
    assert.equal(done.status, 'DONE');
    assert.equal((await db()('jobs').where({ id: second }).first('status')).status, 'CANCELLED');
  });

  it('injects LLM faults through the simulator control API: failing calls, latency, clear', async () => {
    const env = { LLM_BASE_URL: h.stub.url };
    const failed = await ok(['llm', 'fail', '--times', '2'], { env });
    assert.deepEqual(failed.pendingFailures, ['server_error', 'server_error']);
    const { call, project } = await fresh();
    const created = await call('POST', '/v1/posts/generations', { body: generationBody(project.id) });
    const job = await waitForJob(created.body.data.id, undefined, 60_000);
    // Two failed attempts, retried by the workflow, then a success on the third.
    assert.equal(job.status, 'DONE');
    assert.equal(job.attempt_count, 3);
    assert.deepEqual((await ok(['llm', 'state'], { env })).pendingFailures, []);

    const permanent = await ok(['llm', 'fail', '--kind', 'bad_request'], { env });
    assert.deepEqual(permanent.pendingFailures, ['bad_request']);
    const second = await call('POST', '/v1/posts/generations', { body: generationBody(project.id) });
    const failedJob = await waitForJob(second.body.data.id, undefined, 60_000);
    assert.equal(failedJob.status, 'FAILED');

    const slow = await ok(['llm', 'latency', '--ms', '1500'], { env });
    assert.equal(slow.latencyMs, 1500);
    const started = Date.now();
    const third = await call('POST', '/v1/posts/generations', { body: generationBody(project.id) });
    const slowJob = await waitForJob(third.body.data.id, undefined, 60_000);
    assert.equal(slowJob.status, 'DONE');
    assert.ok(Date.now() - started >= 1500, 'the writer call waited for the added latency');

    await ok(['llm', 'fail', '--kind', 'hang', '--times', '3'], { env });
    const cleared = await ok(['llm', 'clear-faults'], { env });
    assert.deepEqual([cleared.pendingFailures, cleared.latencyMs], [[], 0]);

    await fails(['llm', 'fail', '--kind', 'meltdown'], 2, /--kind must be one of rate_limited, server_error/);
    await fails(['llm', 'fail', '--times', '0'], 2, /--times must be at least 1/);
    await fails(['llm', 'state', '--url', 'http://127.0.0.1:1'], 1, /cannot reach the LLM simulator at http:\/\/127\.0\.0\.1:1/);
  });
});
