import assert from 'node:assert/strict';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { periodsAt } from '../../lib/spend/meters';
import { ok } from '../support/admin';
import { client, startApi, type TestServer } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';
import { testWorker } from '../support/worker';
import { waitFor } from '../support/wait';
import { wavWithTranscript } from './files';

// AI spend of the jobs that call a paid model besides post generation (docs/generation.md
// "Spend and budgets"): a file source's ingest (transcription, topics and hooks), a file
// knowledge document's (transcription) and an image generation reserve their kind's estimate through the one reservation of post generation, are
// refused at the daily cap (402 spend_cap_exceeded, spec 7.2) or an exhausted weekly budget
// with nothing recorded, and settle their real cost when they end.

describe('AI spend of source ingest and image generation', function () {
  this.timeout(120_000);
  let api: TestServer;
  const worker = testWorker();

  before(async () => {
    api = await startApi();
  });
  after(async () => {
    await worker.stop();
    await api.close();
  });

  async function fresh(settings: { daily_spend_cap_cents?: number; weekly_ai_budget_cents?: number; ai_enforcement?: string } = {}) {
    const ws = await workspaceWithKey({ plan: 'BUSINESS', projects: 1 });
    if (Object.keys(settings).length) await db()('workspaces').where({ id: ws.workspace.id }).update(settings);
    return { ...ws, call: client(api.url, ws.key) };
  }
  type Fresh = Awaited<ReturnType<typeof fresh>>;

  async function upload(call: Fresh['call'], bytes: Buffer, fileName: string, contentType: string, purpose = 'source'): Promise<string> {
    const minted = await call('POST', '/v1/uploads', { body: { fileName, contentType, bytes: bytes.length, purpose } });
    assert.equal(minted.status, 200, JSON.stringify(minted.body));
    const put = await fetch(minted.body.data.url, { method: 'PUT', headers: minted.body.data.headers, body: bytes });
    assert.equal(put.status, 200);
    return minted.body.data.id;
  }
  const apiSpend = async (call: Fresh['call']) => {
    const r = await call('GET', '/v1/usage');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.data.apiSpend;
  };
  const count = async (table: string, workspaceId: string) =>
    Number((await db()(table).where({ workspace_id: workspaceId }).count('* as n'))[0]!.n);

  it('at the daily cap a file source and an image generation are refused with 402 and nothing is recorded', async () => {
    const ws = await fresh({ daily_spend_cap_cents: 20 });
    // 17 of 20 cents spent today: another 5-cent reservation would pass the cap.
    await db()('ai_spend_days').insert({ workspace_id: ws.workspace.id, bucket_date: periodsAt(new Date()).day, spent_cents: 17 });
    const uploadId = await upload(ws.call, Buffer.from('Planning in writing makes remote teams faster.'), 'memo.txt', 'text/plain');

    const refused = await ws.call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'file', uploadId } });
    assertError(refused, 402, 'spend_cap_exceeded');
    assert.deepEqual(refused.body.error.details, {
      bucketDate: periodsAt(new Date()).day,
      capCents: 20,
      spentCents: 17,
      remainingCents: 3,
      estimateCents: config.sources.reserveCents,
    });
    const image = await ws.call('POST', '/v1/media/generations', { body: { projectId: ws.project.id, prompt: 'A card' } });
    assertError(image, 402, 'spend_cap_exceeded');
    assert.equal(image.body.error.details.estimateCents, config.images.reserveCents);

    assert.equal(await count('sources', ws.workspace.id), 0, 'no source');
    assert.equal(await count('jobs', ws.workspace.id), 0, 'no job');
    assert.deepEqual(await apiSpend(ws.call), { bucketDate: periodsAt(new Date()).day, capCents: 20, spentCents: 17, remainingCents: 3 });
    // The same upload goes through once the cap allows it: the refusal left nothing behind.
    await db()('workspaces').where({ id: ws.workspace.id }).update({ daily_spend_cap_cents: 100 });
    const accepted = await ws.call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'file', uploadId } });
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
    assert.equal((await apiSpend(ws.call)).spentCents, 17 + config.sources.reserveCents, 'spent plus the reservation');
    await ws.call('POST', `/v1/jobs/${accepted.body.data.id}/cancel`);
  });

  it('at the daily cap a file knowledge document is refused; text knowledge, which calls no model, is not', async () => {
    const ws = await fresh({ daily_spend_cap_cents: 20 });
    await db()('ai_spend_days').insert({ workspace_id: ws.workspace.id, bucket_date: periodsAt(new Date()).day, spent_cents: 17 });
    // A recording declared as text: the bytes decide, so it would be transcribed.
    const uploadId = await upload(ws.call, wavWithTranscript('A recorded talk.', 2), 'talk.txt', 'text/plain', 'knowledge');
    const refused = await ws.call('POST', '/v1/knowledge', { body: { projectId: ws.project.id, type: 'file', uploadId } });
    assertError(refused, 402, 'spend_cap_exceeded');
    assert.equal(refused.body.error.details.estimateCents, config.knowledge.reserveCents);
    assert.equal(await count('jobs', ws.workspace.id), 0, 'no job');
    const text = await ws.call('POST', '/v1/knowledge', { body: { projectId: ws.project.id, type: 'text', text: 'Free to index.' } });
    assert.equal(text.status, 200, JSON.stringify(text.body));
    assert.equal((await db()('jobs').where({ id: text.body.data.id }).first('reserved_cents')).reserved_cents, null, 'reserves nothing');
    await ws.call('POST', `/v1/jobs/${text.body.data.id}/cancel`);
  });

  it('an exhausted weekly budget under block refuses a file source with usage_limit_exceeded', async () => {
    const ws = await fresh({ weekly_ai_budget_cents: 10, ai_enforcement: 'block' });
    await db()('ai_budget_weeks').insert({
      workspace_id: ws.workspace.id,
      budget_key: ws.project.id,
      week_start: periodsAt(new Date()).week,
      spent_cents: 10,
    });
    const uploadId = await upload(ws.call, Buffer.from('Hiring slowly is the best decision we made.'), 'hiring.txt', 'text/plain');
    const refused = await ws.call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'file', uploadId } });
    assertError(refused, 402, 'usage_limit_exceeded');
    assert.equal(refused.body.error.details.scope, 'ai_project');
    assert.equal(await count('sources', ws.workspace.id), 0);
    assert.equal(await count('jobs', ws.workspace.id), 0);
  });

  it('a cancelled QUEUED ingest releases its reservation', async () => {
    const ws = await fresh();
    const uploadId = await upload(ws.call, Buffer.from('Queued, then cancelled before any worker ran it.'), 'q.txt', 'text/plain');
    const created = await ws.call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'file', uploadId } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.data.status, 'QUEUED');
    const row = await db()('jobs').where({ id: created.body.data.id }).first('reserved_cents', 'budget_key');
    assert.deepEqual(row, { reserved_cents: config.sources.reserveCents, budget_key: ws.project.id });
    assert.equal((await apiSpend(ws.call)).spentCents, config.sources.reserveCents);
    const cancelled = await ws.call('POST', `/v1/jobs/${created.body.data.id}/cancel`);
    assert.equal(cancelled.body.data.status, 'CANCELLED');
    assert.equal((await apiSpend(ws.call)).spentCents, 0, 'nothing was spent; the reservation is gone');
  });

  it('completed audio ingests (a source, a knowledge document) settle their transcription cost; nothing is left unsettled', async () => {
    const ws = await fresh();
    await worker.start();
    const uploadId = await upload(
      ws.call,
      wavWithTranscript('Weekly planning in writing, and why it works for remote teams.', 3),
      'talk.wav',
      'audio/wav',
    );
    const created = await ws.call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'file', uploadId } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const done = await waitFor(async () => {
      const j = (await ws.call('GET', `/v1/jobs/${created.body.data.id}`)).body.data;
      return ['DONE', 'FAILED', 'CANCELLED'].includes(j.status) && j;
    }, 60_000);
    assert.equal(done.status, 'DONE', JSON.stringify(done));
    // Two billed calls, each at least a cent: three seconds at whisper-1's price (under a cent) and
    // the topics call through the LLM simulator (a few hundred tokens, under a cent).
    await waitFor(async () => (await db()('jobs').where({ id: done.id }).first('spend_settled_at')).spend_settled_at, 10_000);
    const row = await db()('jobs').where({ id: done.id }).first('cost_cents', 'reserved_cents');
    assert.deepEqual(row, { cost_cents: 2, reserved_cents: config.sources.reserveCents });
    assert.equal((await apiSpend(ws.call)).spentCents, 2, 'the reservation was replaced by the cost');
    const week = await db()('ai_budget_weeks').where({ workspace_id: ws.workspace.id, budget_key: ws.project.id }).first();
    assert.deepEqual([week.spent_cents, week.reserved_cents], [2, 0]);

    // A recording added to the knowledge base is transcribed too (the bytes decide, not the
    // declared type: docs/sources.md "Extraction"), and settled the same way.
    const kUpload = await upload(
      ws.call,
      wavWithTranscript('Hiring slowly, and what it taught us about teams.', 2),
      'k.txt',
      'text/plain',
      'knowledge',
    );
    const kCreated = await ws.call('POST', '/v1/knowledge', { body: { projectId: ws.project.id, type: 'file', uploadId: kUpload } });
    assert.equal(kCreated.status, 200, JSON.stringify(kCreated.body));
    const kDone = await waitFor(async () => {
      const j = (await ws.call('GET', `/v1/jobs/${kCreated.body.data.id}`)).body.data;
      return ['DONE', 'FAILED', 'CANCELLED'].includes(j.status) && j;
    }, 60_000);
    assert.equal(kDone.status, 'DONE', JSON.stringify(kDone));
    await waitFor(async () => (await db()('jobs').where({ id: kDone.id }).first('spend_settled_at')).spend_settled_at, 10_000);
    assert.equal((await db()('jobs').where({ id: kDone.id }).first('cost_cents')).cost_cents, 1);
    assert.equal((await apiSpend(ws.call)).spentCents, 3);

    const unsettled = await ok(['jobs', 'unsettled', '--workspace', ws.workspace.id]);
    assert.deepEqual([unsettled.total, unsettled.reservedCents, unsettled.jobs], [0, 0, []]);
  });
});
