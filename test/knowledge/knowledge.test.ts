import assert from 'node:assert/strict';
import { createKnowledgeActivities } from '../../activities/knowledge';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { createTranscriptClient } from '../../lib/knowledge/youtube';
import type { Resolver } from '../../lib/outbound/resolve';
import { objectStore } from '../../lib/storage/objectStore';
import { DEFAULT_VIDEOS, type SimVideo } from '../../sim/youtube/server';
import { client, startApi, type TestServer } from '../support/app';
import { member, uniqueKey, workspaceWithKey } from '../support/factories';
import { testWorker } from '../support/worker';
import { assertError } from '../support/foundation';
import { maybeRecordHistory } from '../support/histories';
import { agentToken, oauthToken } from '../oauth/support';
import { waitFor } from '../support/wait';
import { startPageServer, type PageServer } from './support';
import { pdfFixture, wavWithTranscript } from '../sources/files';

// The knowledge base (docs/knowledge.md; spec 2.10, 4.5, 5.4): KNOWLEDGE_INGEST jobs for text,
// file, url and youtube on Temporal, the document and its preview, visibility by assignment,
// ranked search, and the URL guard. Real Postgres, Temporal, object store, a local web server
// and the transcript simulator.

const qs = (path: string, params: Record<string, string>) => `${path}?${new URLSearchParams(params)}`;
const youtubeUrl = () => process.env.YOUTUBE_TRANSCRIPT_URL!;

async function addVideo(video: SimVideo) {
  const res = await fetch(`${youtubeUrl()}/__sim/videos`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(video),
  });
  assert.equal(res.status, 200);
}

describe('knowledge base (POST/GET /v1/knowledge)', function () {
  this.timeout(120_000);
  let api: TestServer;
  let pages: PageServer;
  let ws: Awaited<ReturnType<typeof workspaceWithKey>>;
  let call: ReturnType<typeof client>;
  const worker = testWorker();
  /** Names the tests resolve themselves; everything else goes to the system resolver. */
  const fakeDns = new Map<string, string>();
  const resolve: Resolver = async (host) => {
    const a = fakeDns.get(host);
    if (a) return [{ address: a, family: a.includes(':') ? 6 : 4 }];
    throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  };
  const saved = { ...config.knowledge };

  async function startWorker() {
    const activities = createKnowledgeActivities({
      db: db(),
      store: objectStore,
      transcripts: createTranscriptClient({ baseUrl: youtubeUrl(), port: 0, timeoutMs: 5_000 }),
      resolve,
    });
    await worker.start(activities);
  }
  const stopWorker = () => worker.stop();

  before(async () => {
    api = await startApi();
    pages = await startPageServer();
    ws = await workspaceWithKey({ projects: 2 });
    call = client(api.url, ws.key);
    Object.assign(config.knowledge, { allowLoopback: true, allowHttp: true });
    await startWorker();
  });
  after(async () => {
    await stopWorker();
    Object.assign(config.knowledge, saved);
    await pages.close();
    await api.close();
  });

  const job = async (id: string, c = call) => (await c('GET', `/v1/jobs/${id}`)).body.data;
  async function ingest(body: Record<string, unknown>, headers: Record<string, string> = {}) {
    const res = await call('POST', '/v1/knowledge', { body, headers });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.type, 'KNOWLEDGE_INGEST');
    return res.body.data;
  }
  async function finished(jobId: string, c = call) {
    return waitFor(async () => {
      const j = await job(jobId, c);
      return ['DONE', 'FAILED', 'CANCELLED'].includes(j.status) ? j : null;
    }, 60_000);
  }
  async function ingestDone(body: Record<string, unknown>) {
    const j = await finished((await ingest(body)).id);
    assert.equal(j.status, 'DONE', JSON.stringify(j));
    assert.match(j.result.documentId, /^kb_/);
    return (await call('GET', `/v1/knowledge/${j.result.documentId}`)).body.data;
  }

  it('text: a job that ends DONE with { documentId }, the document with chunks and a preview', async () => {
    const text = 'Our studio ships every release with a 14-day rollback guarantee.\n\nCustomers in Lyon asked for it first.';
    const queued = await ingest({ type: 'text', projectId: ws.project.id, text, name: 'Release policy', tags: ['policy'] });
    assert.equal(queued.status, 'QUEUED');
    assert.equal(queued.projectId, ws.project.id);
    const done = await finished(queued.id);
    assert.equal(done.status, 'DONE');
    assert.equal(done.attemptCount, 1);
    const doc = (await call('GET', `/v1/knowledge/${done.result.documentId}`)).body.data;
    assert.equal(doc.scope, 'PROJECT');
    assert.equal(doc.type, 'text');
    assert.equal(doc.name, 'Release policy');
    assert.deepEqual(doc.tags, ['policy']);
    assert.equal(doc.status, 'Success');
    assert.equal(doc.language, 'en');
    assert.equal(doc.chunkCount, 1);
    assert.equal(doc.textPreview, text);
    assert.equal(doc.textPreviewTruncated, false);
    assert.equal(doc.hasFullText, true);
    assert.equal(doc.lastSyncedAt, null);
    assert.equal('body' in doc || 'text' in doc, false);
    // The ingest workflow's id is the job id (docs/knowledge.md).
    await maybeRecordHistory(done.id, 'ingestKnowledge-done');
  });

  it('an undeclared language is the one guess sources make too (Portuguese, which the two guessers once told apart)', async () => {
    const text = 'O produto está pronto e as equipes estão em boa posição para o lançamento do ano que vem.';
    const doc = await ingestDone({ type: 'text', projectId: ws.project.id, text });
    assert.equal(doc.language, 'pt');
    const source = await call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'text', text } });
    assert.equal(source.status, 200, JSON.stringify(source.body));
    assert.equal(source.body.data.language, doc.language);
  });

  it('the preview stops at 2,000 characters; the full body is indexed and never returned', async () => {
    const para = (i: number) =>
      `Paragraph ${i} talks about distributed tracing and sampling budgets in production systems. `.repeat(5).trim();
    const text = Array.from({ length: 20 }, (_, i) => para(i)).join('\n\n') + '\n\nThe final zebracorn clause.';
    assert.ok(text.length > 8_000);
    const doc = await ingestDone({ type: 'text', projectId: ws.project.id, text });
    assert.equal(doc.textPreview.length, 2_000);
    assert.equal(doc.textPreview, text.slice(0, 2_000));
    assert.equal(doc.textPreviewTruncated, true);
    assert.ok(doc.chunkCount > 3, `chunkCount ${doc.chunkCount}`);
    assert.ok(!JSON.stringify(doc).includes('zebracorn'));
    // …but the tail is searchable.
    const hits = (await call('GET', qs('/v1/knowledge', { query: 'zebracorn' }))).body.data;
    assert.deepEqual(
      hits.map((h: { id: string }) => h.id),
      [doc.id],
    );
    assert.match(hits[0].snippet, /\*\*zebracorn\*\*/);
  });

  it('validates type-specific fields with 422, a missing project with 400, text over 100,000 with 413; nothing is queued', async () => {
    const before = await db()('jobs')
      .where({ workspace_id: ws.workspace.id, type: 'KNOWLEDGE_INGEST' })
      .count<{ count: string }[]>('* as count');
    assertError(await call('POST', '/v1/knowledge', { body: { type: 'text', projectId: ws.project.id } }), 422, 'unprocessable');
    assertError(
      await call('POST', '/v1/knowledge', { body: { type: 'url', projectId: ws.project.id, url: 'ftp://x.example/a' } }),
      422,
      'unprocessable',
    );
    assertError(
      await call('POST', '/v1/knowledge', { body: { type: 'youtube', projectId: ws.project.id, videoId: 'nope' } }),
      422,
      'unprocessable',
    );
    assertError(await call('POST', '/v1/knowledge', { body: { type: 'podcast', projectId: ws.project.id } }), 422, 'unprocessable');
    assertError(
      await call('POST', '/v1/knowledge', { body: { type: 'file', projectId: ws.project.id, uploadId: 'upl_missing' } }),
      422,
      'unprocessable',
    );
    assertError(await call('POST', '/v1/knowledge', { body: { type: 'text', text: 'Hello there' } }), 400, 'invalid_request');
    assertError(
      await call('POST', '/v1/knowledge', { body: { type: 'text', projectId: ws.project.id, text: 'x'.repeat(100_001) } }),
      413,
      'payload_too_large',
    );
    assertError(
      await call('POST', '/v1/knowledge', { body: { type: 'text', projectId: 'proj_nope', text: 'Hello there' } }),
      404,
      'not_found',
    );
    const after = await db()('jobs')
      .where({ workspace_id: ws.workspace.id, type: 'KNOWLEDGE_INGEST' })
      .count<{ count: string }[]>('* as count');
    assert.equal(after[0]!.count, before[0]!.count);
  });

  it('file: an upload of purpose knowledge (text/markdown) read from the object store', async () => {
    const md = '# Pricing notes\n\nThe Starter plan costs 19 euros a month and includes three seats.\n';
    const bytes = Buffer.from(md);
    const up = await call('POST', '/v1/uploads', {
      body: { fileName: 'pricing.md', contentType: 'text/markdown', bytes: bytes.length, purpose: 'knowledge', projectId: ws.project.id },
    });
    assert.equal(up.status, 200, JSON.stringify(up.body));
    // Not PUT yet: 422, nothing queued.
    assertError(
      await call('POST', '/v1/knowledge', { body: { type: 'file', projectId: ws.project.id, uploadId: up.body.data.id } }),
      422,
      'unprocessable',
    );
    assert.equal((await fetch(up.body.data.url, { method: 'PUT', headers: up.body.data.headers, body: bytes })).status, 200);
    const doc = await ingestDone({ type: 'file', projectId: ws.project.id, uploadId: up.body.data.id });
    assert.equal(doc.type, 'file');
    assert.equal(doc.name, 'pricing.md');
    assert.equal(doc.sourceName, 'pricing.md');
    assert.equal(doc.textPreview, md.trim());
  });

  it('file, inline: a PDF and a recording through the shared extraction; an unreadable file fails with its code', async () => {
    const inline = (bytes: Buffer, filename: string, mimeType: string) => ({
      type: 'file',
      projectId: ws.project.id,
      content_base64: bytes.toString('base64'),
      mimeType,
      filename,
    });
    const pdf = await ingestDone(inline(pdfFixture(), 'notes.pdf', 'application/pdf'));
    assert.equal(pdf.type, 'file');
    assert.equal(pdf.sourceName, 'notes.pdf');
    assert.match(pdf.textPreview, /shipping weekly beats shipping monthly/);
    const spoken = 'Our support team answers every ticket within four hours on weekdays.';
    const talk = await ingestDone(inline(wavWithTranscript(spoken, 2), 'talk.wav', 'audio/wav'));
    assert.match(talk.textPreview, /within four hours on weekdays/);
    // Bytes that are no readable kind, whatever the declared type: FAILED, not retried, no document.
    const before = await db()('knowledge_documents').where({ workspace_id: ws.workspace.id }).count<{ count: string }[]>({ count: '*' });
    const bad = await finished(
      (await ingest(inline(Buffer.from([0x00, 0x01, 0x02, 0xff, 0xfe, 0x00, 0x10]), 'blob.txt', 'text/plain'))).id,
    );
    assert.equal(bad.status, 'FAILED', JSON.stringify(bad));
    assert.equal(bad.errorCode, 'unsupported_media_type');
    assert.equal(bad.attemptCount, 1);
    const after = await db()('knowledge_documents').where({ workspace_id: ws.workspace.id }).count<{ count: string }[]>({ count: '*' });
    assert.equal(after[0]!.count, before[0]!.count);
    // Inline fields are all required; bad base64 is refused before anything is stored or queued.
    assertError(
      await call('POST', '/v1/knowledge', { body: { type: 'file', projectId: ws.project.id, content_base64: 'aGk=', filename: 'x.txt' } }),
      400,
      'invalid_request',
    );
    const badBase64 = { ...inline(Buffer.from('x'), 'x.txt', 'text/plain'), content_base64: 'not base64!' };
    assertError(await call('POST', '/v1/knowledge', { body: badBase64 }), 400, 'invalid_request');
  });

  it('url: the readable article of a page on a local server (loopback allowed by configuration)', async () => {
    pages.html('/article', 'How we plan launches', [
      'Every launch at Example starts with a one-page brief written two weeks ahead of the date.',
      'The brief names one owner, one metric and the single sentence customers should remember afterwards.',
      'After launch, the owner writes a short retro within five working days and shares it widely.',
    ]);
    const doc = await ingestDone({ type: 'url', projectId: ws.project.id, url: `${pages.url}/article` });
    assert.equal(doc.type, 'url');
    assert.equal(doc.name, 'How we plan launches');
    assert.equal(doc.sourceUrl, `${pages.url}/article`);
    assert.equal(doc.language, 'en');
    assert.ok(doc.lastSyncedAt);
    assert.match(doc.textPreview, /one-page brief/);
    assert.doesNotMatch(doc.textPreview, /Copyright|About/, 'navigation and footer are left out');
  });

  it('url: refusals end the job FAILED with url_refused: private ranges, metadata, DNS pointing inside, a redirect to loopback', async () => {
    Object.assign(config.knowledge, { allowLoopback: false });
    try {
      fakeDns.set('intranet.example', '10.1.2.3');
      fakeDns.set('rebind.example', '169.254.169.254');
      fakeDns.set('public.example', '127.0.0.1'); // resolves to loopback: refused while loopback is not allowed
      for (const url of [
        'http://10.0.0.8/x',
        'http://192.168.1.1/',
        'http://169.254.169.254/latest/meta-data/',
        'http://[::1]/',
        'http://intranet.example/a',
        'http://rebind.example/',
      ]) {
        const j = await finished((await ingest({ type: 'url', projectId: ws.project.id, url })).id);
        assert.equal(j.status, 'FAILED', url);
        assert.equal(j.errorCode, 'url_refused', `${url}: ${j.errorMessage}`);
      }
      const j = await finished((await ingest({ type: 'url', projectId: ws.project.id, url: 'http://public.example/' })).id);
      assert.equal(j.errorCode, 'url_refused');
    } finally {
      Object.assign(config.knowledge, { allowLoopback: true });
      fakeDns.clear();
    }
    // Each redirect is a new user-given URL, checked again before anything is sent to it: from a
    // page the policy allows to metadata, a private range, and a name whose DNS answer is inside.
    fakeDns.set('inside.example', '192.168.10.20');
    try {
      for (const target of ['http://169.254.169.254/latest/meta-data/', 'http://10.9.8.7/admin', 'http://inside.example/x']) {
        pages.set('/bounce', (_req, res) => res.writeHead(302, { location: target }).end());
        const j = await finished((await ingest({ type: 'url', projectId: ws.project.id, url: `${pages.url}/bounce` })).id);
        assert.equal(j.status, 'FAILED', target);
        assert.equal(j.errorCode, 'url_refused', `${target}: ${j.errorMessage}`);
      }
    } finally {
      fakeDns.clear();
    }
  });

  it('url: with loopback refused, an exactly allowed origin is fetched and a redirect from it back into loopback fails the job', async () => {
    // KNOWLEDGE_FETCH_ALLOW_ORIGINS (docs/knowledge.md "URL ingest"): the page server's origin
    // only; another loopback port, `localhost`, `127.1` and `[::1]` stay refused.
    const elsewhere = await startPageServer();
    elsewhere.html('/secret', 'Internal admin', ['This page must never be ingested from a redirect.']);
    const port = new URL(pages.url).port;
    Object.assign(config.knowledge, { allowLoopback: false, fetchAllowOrigins: [pages.url] });
    fakeDns.set('localhost', '127.0.0.1');
    try {
      const doc = await ingestDone({ type: 'url', projectId: ws.project.id, url: `${pages.url}/article` });
      assert.equal(doc.name, 'How we plan launches');
      for (const target of [
        `${elsewhere.url}/secret`,
        `http://localhost:${port}/article`,
        `http://127.1:${port}/article`,
        `http://[::1]:${port}/article`,
      ]) {
        pages.set('/bounce', (_req, res) => res.writeHead(302, { location: target }).end());
        const j = await finished((await ingest({ type: 'url', projectId: ws.project.id, url: `${pages.url}/bounce` })).id);
        assert.equal(j.status, 'FAILED', target);
        assert.equal(j.errorCode, 'url_refused', `${target}: ${j.errorMessage}`);
        assert.match(j.errorMessage, /loopback/);
        if (target.includes('127.1')) await maybeRecordHistory(j.id, 'ingestKnowledge-failed-url-refused');
      }
      assert.equal(elsewhere.hits.get('/secret') ?? 0, 0, 'nothing was sent to the other port');
      // Directly, too: the other port is not allowed.
      const direct = await finished((await ingest({ type: 'url', projectId: ws.project.id, url: `${elsewhere.url}/secret` })).id);
      assert.equal(direct.errorCode, 'url_refused');
    } finally {
      Object.assign(config.knowledge, { allowLoopback: true, fetchAllowOrigins: [] });
      fakeDns.clear();
      await elsewhere.close();
    }
  });

  it('url: a redirect chain is followed within the bound; too many redirects and 404 fail with their codes', async () => {
    pages.set('/r1', (_q, res) => res.writeHead(301, { location: '/r2' }).end());
    pages.set('/r2', (_q, res) => res.writeHead(302, { location: '/article' }).end());
    const doc = await ingestDone({ type: 'url', projectId: ws.project.id, url: `${pages.url}/r1` });
    assert.equal(doc.name, 'How we plan launches');
    pages.set('/loop', (_q, res) => res.writeHead(302, { location: '/loop' }).end());
    const loop = await finished((await ingest({ type: 'url', projectId: ws.project.id, url: `${pages.url}/loop` })).id);
    assert.equal(loop.errorCode, 'url_too_many_redirects');
    const missing = await finished((await ingest({ type: 'url', projectId: ws.project.id, url: `${pages.url}/missing` })).id);
    assert.equal(missing.status, 'FAILED');
    assert.equal(missing.errorCode, 'url_http_status');
    pages.set('/huge', (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('y'.repeat(config.knowledge.fetchMaxBytes + 10));
    });
    const huge = await finished((await ingest({ type: 'url', projectId: ws.project.id, url: `${pages.url}/huge` })).id);
    assert.equal(huge.errorCode, 'url_too_large');
  });

  it('youtube: the transcript from the simulator; an unknown video fails with video_not_found', async () => {
    // The simulator's sample transcript under a video of this test's own, added at run time.
    await addVideo({ ...DEFAULT_VIDEOS[0]!, videoId: 'kbTest00001', title: 'Onboarding in three calls', channel: 'Test channel' });
    const doc = await ingestDone({ type: 'youtube', projectId: ws.project.id, url: 'https://www.youtube.com/watch?v=kbTest00001' });
    assert.equal(doc.type, 'youtube');
    assert.equal(doc.name, 'Onboarding in three calls');
    assert.equal(doc.sourceUrl, 'https://www.youtube.com/watch?v=kbTest00001');
    assert.equal(doc.sourceName, 'Test channel');
    assert.match(doc.textPreview, /the first line decides whether anyone reads the second/);
    const missing = await finished((await ingest({ type: 'youtube', projectId: ws.project.id, videoId: 'zzzzzzzzzzz' })).id);
    assert.equal(missing.status, 'FAILED');
    assert.equal(missing.errorCode, 'video_not_found');
    assert.equal(missing.attemptCount, 1, 'a permanent failure is not retried');
  });

  it('idempotency: the same key and body replay the job; another body is 409', async () => {
    const key = uniqueKey();
    const body = { type: 'text', projectId: ws.project.id, text: 'Idempotent knowledge about llamas and alpacas in Peru.' };
    const a = await call('POST', '/v1/knowledge', { body, headers: { 'Idempotency-Key': key } });
    const b = await call('POST', '/v1/knowledge', { body, headers: { 'Idempotency-Key': key } });
    assert.equal(b.headers.get('idempotent-replayed'), 'true');
    assert.equal(a.body.data.id, b.body.data.id);
    assertError(
      await call('POST', '/v1/knowledge', { body: { ...body, text: 'Other' }, headers: { 'Idempotency-Key': key } }),
      409,
      'idempotency_key_conflict',
    );
    assert.equal((await finished(a.body.data.id)).status, 'DONE');
    assert.equal(
      await db()('knowledge_documents')
        .where({ job_id: a.body.data.id })
        .count<{ count: string }[]>('* as count')
        .then((r) => Number(r[0]!.count)),
      1,
    );
  });

  it('cancel while QUEUED: the job ends CANCELLED and no document is written', async () => {
    await stopWorker();
    try {
      const queued = await ingest({ type: 'text', projectId: ws.project.id, text: 'Never indexed: a note about walruses.' });
      const c = await call('POST', `/v1/jobs/${queued.id}/cancel`);
      assert.equal(c.status, 200, JSON.stringify(c.body));
      assert.equal(c.body.data.status, 'CANCELLED');
      assert.equal((await call('POST', `/v1/jobs/${queued.id}/cancel`)).body.data.status, 'CANCELLED');
      await startWorker();
      await new Promise((r) => setTimeout(r, 1_500));
      assert.equal((await job(queued.id)).status, 'CANCELLED');
      assert.equal((await db()('knowledge_documents').where({ job_id: queued.id })).length, 0);
      await maybeRecordHistory(queued.id, 'ingestKnowledge-cancelled-while-queued');
    } finally {
      if (!worker.started) await startWorker();
    }
  });

  it('search ranks documents by relevance, narrows by project, and pages with a cursor', async () => {
    const fresh = await workspaceWithKey({ projects: 2 });
    const c = client(api.url, fresh.key);
    const add = async (projectId: string, text: string, name: string) => {
      const r = await c('POST', '/v1/knowledge', { body: { type: 'text', projectId, text, name } });
      const j = await finished(r.body.data.id, c);
      assert.equal(j.status, 'DONE');
      return j.result.documentId as string;
    };
    const strong = await add(
      fresh.projects[0]!.id,
      'Kayak safety: kayak checks, kayak paddles, kayak drills and kayak rescue practice every kayak season.',
      'Kayaks',
    );
    const weak = await add(fresh.projects[0]!.id, 'Our offsite had hiking, a boat tour and one kayak.', 'Offsite');
    const other = await add(fresh.projects[1]!.id, 'Kayak rentals near the harbour, kayak prices.', 'Rentals');
    await add(fresh.projects[0]!.id, 'Nothing about boats here, only spreadsheets.', 'Finance');
    const all = (await c('GET', qs('/v1/knowledge', { query: 'kayak' }))).body;
    assert.deepEqual(
      all.data.map((d: { id: string }) => d.id),
      [strong, other, weak],
    );
    assert.ok(all.data[0].rank > all.data[2].rank);
    assert.match(all.data[0].snippet, /\*\*[Kk]ayak\*\*/);
    const proj = (await c('GET', qs('/v1/knowledge', { query: 'kayak', projectId: fresh.projects[0]!.id }))).body.data;
    assert.deepEqual(
      proj.map((d: { id: string }) => d.id),
      [strong, weak],
    );
    // English stemming: "kayaks" finds "kayak".
    assert.equal((await c('GET', qs('/v1/knowledge', { query: 'kayaks' }))).body.data.length, 3);
    const p1 = (await c('GET', qs('/v1/knowledge', { query: 'kayak', limit: '2' }))).body;
    assert.equal(p1.data.length, 2);
    assert.equal(p1.pagination.has_more, true);
    const p2 = (await c('GET', qs('/v1/knowledge', { query: 'kayak', limit: '2', cursor: p1.pagination.next_cursor }))).body;
    assert.deepEqual(
      p2.data.map((d: { id: string }) => d.id),
      [weak],
    );
    assertError(await c('GET', qs('/v1/knowledge', { query: 'boat', limit: '2', cursor: p1.pagination.next_cursor })), 400, 'bad_cursor');
    // Without a query: newest first.
    const list = (await c('GET', '/v1/knowledge')).body.data;
    assert.equal(list.length, 4);
    assert.equal(list[0].name, 'Finance');
  });

  it('visibility: a member sees workspace documents and those of assigned projects; ephemeral uploads read as not found', async () => {
    const fresh = await workspaceWithKey({ projects: 2 });
    const c = client(api.url, fresh.key);
    const add = async (body: Record<string, unknown>) => {
      const r = await c('POST', '/v1/knowledge', { body: { type: 'text', ...body } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return (await finished(r.body.data.id, c)).result.documentId as string;
    };
    const mine = await add({ projectId: fresh.projects[0]!.id, text: 'Assigned project knowledge about orchards.' });
    const theirs = await add({ projectId: fresh.projects[1]!.id, text: 'Other project knowledge about orchards.' });
    const shared = await add({ scope: 'WORKSPACE', text: 'Workspace-wide knowledge about orchards.' });
    const shown = (await c('GET', `/v1/knowledge/${shared}`)).body.data;
    assert.equal(shown.scope, 'WORKSPACE');
    assert.equal(shown.projectId, null);

    const user = await member(fresh.workspace.id, 'Member', [fresh.projects[0]!.id]);
    const token = (await agentToken(api.url, { email: user.email, scope: 'read write', access: 'full', workspace: fresh.workspace.id }))
      .access_token;
    const m = client(api.url, token);
    assert.equal((await m('GET', `/v1/knowledge/${mine}`)).status, 200);
    assert.equal((await m('GET', `/v1/knowledge/${shared}`)).status, 200);
    assertError(await m('GET', `/v1/knowledge/${theirs}`), 404, 'not_found');
    assertError(await m('GET', qs(`/v1/knowledge/${mine}`, { projectId: fresh.projects[1]!.id })), 404, 'not_found');
    assert.equal((await m('GET', qs(`/v1/knowledge/${shared}`, { projectId: fresh.projects[0]!.id }))).status, 200);
    const found = (await m('GET', qs('/v1/knowledge', { query: 'orchards' }))).body.data.map((d: { id: string }) => d.id).sort();
    assert.deepEqual(found, [mine, shared].sort());
    // A narrowed member cannot add workspace-wide knowledge.
    assertError(await m('POST', '/v1/knowledge', { body: { type: 'text', scope: 'WORKSPACE', text: 'Nope' } }), 403, 'forbidden_project');

    await db()('knowledge_documents').where({ id: mine }).update({ ephemeral: true });
    assertError(await c('GET', `/v1/knowledge/${mine}`), 404, 'not_found');
    assert.ok(!(await c('GET', '/v1/knowledge')).body.data.some((d: { id: string }) => d.id === mine));
    // Another workspace's id is not found (spec 1 rule 1).
    assertError(await call('GET', `/v1/knowledge/${shared}`), 404, 'not_found');
  });

  it('client role (spec 5.4): reads and writes answer 403 forbidden_project with details.reason client_role', async () => {
    const c = client(api.url, await oauthToken(api.url, ws.workspace.id, { role: 'Client', scope: 'read write' }));
    for (const [method, path, body] of [
      ['POST', '/v1/knowledge', { type: 'text', projectId: ws.project.id, text: 'x y z' }],
      ['GET', '/v1/knowledge', undefined],
      ['GET', '/v1/knowledge/kb_whatever', undefined],
    ] as const) {
      const err = assertError(await c(method, path, body ? { body } : {}), 403, 'forbidden_project');
      assert.equal(err.details?.reason, 'client_role', `${method} ${path}`);
    }
  });

  it('scopes: knowledge:read reads, only knowledge:write writes', async () => {
    const ro = await workspaceWithKey({ scopes: ['knowledge:read'] });
    const c = client(api.url, ro.key);
    assert.equal((await c('GET', '/v1/knowledge')).status, 200);
    const err = assertError(
      await c('POST', '/v1/knowledge', { body: { type: 'text', projectId: ro.project.id, text: 'x' } }),
      403,
      'scope_missing',
    );
    assert.equal(err.details?.required_scope, 'knowledge:write');
    const none = await workspaceWithKey({ scopes: ['posts:read'] });
    assertError(await client(api.url, none.key)('GET', '/v1/knowledge'), 403, 'scope_missing');
  });
});
