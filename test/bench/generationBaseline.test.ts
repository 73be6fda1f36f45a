import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import {
  BASELINE_TABLE,
  bareRound,
  compareToBaseline,
  roundFigures,
  startBareBaseline,
  summarizeRounds,
  type BareBaseline,
  type Reply,
} from '../../bench/generation/baseline';
import { db } from '../../lib/db';

// The generation bench's bare baseline (bench/generation): its figures, its comparison with the
// service, and one real burst through the bare server and worker on the run's Temporal server.

const reply = (status: number, sentAt: number, answeredAt: number, body: unknown = { data: { id: 'x' } }): Reply => ({
  status,
  body,
  sentAt,
  answeredAt,
});

describe('bench/generation figures', () => {
  it('computes accepted/s, refusals, queue→done and the drain rate of one burst', () => {
    const r = roundFigures({
      requests: 4,
      t0: 1000,
      replies: [
        reply(200, 1000, 1100),
        reply(200, 1000, 1300),
        reply(200, 1000, 1500),
        reply(429, 1000, 1200, { error: { code: 'rate_limited' } }),
      ],
      jobs: [
        { createdAt: 10_000, completedAt: 10_400 },
        { createdAt: 10_100, completedAt: 11_100 },
        { createdAt: 10_200, completedAt: null },
      ],
      drafts: null,
      cpu: null,
    });
    assert.equal(r.accepted, 3);
    assert.deepEqual(r.refused, { '429 rate_limited': 1 });
    assert.equal(r.burstMs, 500);
    assert.equal(r.acceptedPerSecond, 6);
    assert.equal(r.acceptLatencyMs.p50, 300);
    assert.equal(r.queueToDoneMs.count, 2);
    assert.equal(r.queueToDoneMs.p50, 400);
    assert.equal(r.queueToDoneMs.max, 1000);
    assert.equal(r.lastDoneAfterMs, 1100, 'from the first job queued to the last one done');
    assert.equal(r.drainPerSecond, 2 / 1.1);
    assert.equal(r.failed, 1);
  });

  it('compares the service with the baseline: p50 ratio baseline/service, shares of accepted/s and drain', () => {
    const base = { acceptedPerSecond: 400, answerP50Ms: 200, queueToDoneP50Ms: 500, queueToDoneP99Ms: 900, drainPerSecond: 100 };
    const service = { acceptedPerSecond: 100, answerP50Ms: 900, queueToDoneP50Ms: 2000, queueToDoneP99Ms: 4000, drainPerSecond: 30 };
    assert.deepEqual(compareToBaseline(service, base), { queueToDoneP50Ratio: 0.25, acceptedPerSecondShare: 0.25, drainShare: 0.3 });
    assert.deepEqual(compareToBaseline({ ...service, queueToDoneP50Ms: 0 }, { ...base, acceptedPerSecond: 0, drainPerSecond: 0 }), {
      queueToDoneP50Ratio: null,
      acceptedPerSecondShare: null,
      drainShare: null,
    });
  });

  it('summarizes rounds by their medians', () => {
    const mk = (p50: number, rate: number) =>
      roundFigures({
        requests: 1,
        t0: 0,
        replies: [reply(200, 0, 1000 / rate)],
        jobs: [{ createdAt: 0, completedAt: p50 }],
        drafts: 1,
        cpu: null,
      });
    const s = summarizeRounds([mk(300, 10), mk(100, 30), mk(200, 20)]);
    assert.equal(s.queueToDoneP50Ms, 200);
    assert.equal(s.acceptedPerSecond, 20);
  });
});

describe('bench/generation bare baseline', function () {
  this.timeout(180_000);
  let bare: BareBaseline | null = null;
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gen-baseline-'));

  after(async () => {
    await bare?.stop();
    await db().schema.dropTableIfExists(BASELINE_TABLE);
    fs.rmSync(logDir, { recursive: true, force: true });
  });

  it('accepts a burst with one row and one workflow each, and the worker completes every row', async () => {
    bare = await startBareBaseline({ env: process.env, logDir });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    try {
      const { replies, jobs } = await bareRound(bare, agent, 8, (i) => ({ n: i }), 60_000);
      assert.deepEqual(
        replies.map((r) => r.status),
        Array(8).fill(200),
      );
      const ids = replies.map((r) => r.body.data.id as string);
      assert.equal(new Set(ids).size, 8);
      assert.equal(jobs.length, 8);
      for (const j of jobs) assert.ok(j.completedAt !== null && j.completedAt >= j.createdAt);
      // One workflow per row, its id the row's, its one step run by the baseline worker.
      const { temporalClient } = await import('../../lib/temporal/client');
      // The row is completed by the activity; the workflow closes just after it.
      const handle = (await temporalClient()).workflow.getHandle(ids[0]!);
      await handle.result();
      const d = await handle.describe();
      assert.equal(d.type, 'bareJobWorkflow');
      assert.equal(d.status.name, 'COMPLETED');
      const fig = roundFigures({ requests: 8, replies, t0: Math.min(...replies.map((r) => r.sentAt)), jobs, drafts: null, cpu: null });
      assert.equal(fig.accepted, 8);
      assert.equal(fig.failed, 0);
      assert.ok(fig.queueToDoneMs.p50 > 0);
    } finally {
      agent.destroy();
    }
  });
});
