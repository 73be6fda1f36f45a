import assert from 'node:assert/strict';
import type { NativeConnection } from '@temporalio/worker';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { createWorker, type ServiceWorker } from '../../workers/worker';
import { client, startApi, type TestServer } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';
import { maybeRecordHistory } from '../support/histories';
import { waitFor } from '../support/wait';
import { oauthToken } from '../oauth/support';
import { docxFixture, pdfFixture, pngBytes, wavWithTranscript } from './files';

// Sources (spec 2.11, 4.5; docs/sources.md) over real HTTP, Postgres, the object store, Temporal
// and the transcription simulator: text sources answer at once; file sources run a SOURCE_INGEST
// job with the job envelope of generation (QUEUED → RUNNING → DONE, cancel while QUEUED).

describe('sources (POST /v1/sources, GET /v1/sources/{id})', function () {
  this.timeout(120_000);
  let api: TestServer;
  let ws: Awaited<ReturnType<typeof workspaceWithKey>>;
  let call: ReturnType<typeof client>;
  let current: { worker: ServiceWorker; connection: NativeConnection; running: Promise<void> } | null = null;

  async function startWorker() {
    const { worker, connection } = await createWorker();
    current = { worker, connection, running: worker.run() };
  }
  before(async () => {
    api = await startApi();
    ws = await workspaceWithKey({ projects: 1 });
    call = client(api.url, ws.key);
  });
  after(async () => {
    if (current) {
      current.worker.shutdown();
      await current.running;
      await current.connection.close();
    }
    await api.close();
  });

  /** Mints an upload of purpose source and PUTs the bytes; answers the upl_ id. */
  async function upload(bytes: Buffer, fileName: string, contentType: string, c = call): Promise<string> {
    const minted = await c('POST', '/v1/uploads', { body: { fileName, contentType, bytes: bytes.length, purpose: 'source' } });
    assert.equal(minted.status, 200, JSON.stringify(minted.body));
    const put = await fetch(minted.body.data.url, { method: 'PUT', headers: minted.body.data.headers, body: bytes });
    assert.equal(put.status, 200);
    return minted.body.data.id;
  }
  const job = async (id: string) => (await call('GET', `/v1/jobs/${id}`)).body.data;
  const finished = (id: string) =>
    waitFor(async () => {
      const j = await job(id);
      return ['DONE', 'FAILED', 'CANCELLED'].includes(j.status) && j;
    }, 60_000);

  describe('text sources', () => {
    it('answer the Source at once, with topics, hooks and a 2,000-character preview', async () => {
      const sentence = 'Remote teams ship faster when the planning of the work is in writing and it is visible to all. ';
      const text = `Why do remote teams ship faster? ${sentence.repeat(60)}`;
      const created = await call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'text', text, name: 'Planning memo' } });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const s = created.body.data;
      assert.match(s.id, /^src_/);
      assert.equal(s.status, 'Success');
      assert.equal(s.type, 'text');
      assert.equal(s.name, 'Planning memo');
      assert.equal(s.preview.length, config.sources.previewChars);
      assert.equal(s.preview, text.slice(0, 2000));
      assert.equal(s.previewTruncated, true);
      assert.equal(s.textLength, text.length);
      assert.equal(s.language, 'en');
      assert.ok(s.topics.includes('remote') && s.topics.includes('planning'), JSON.stringify(s.topics));
      assert.ok(s.hooks.length >= 1 && s.hooks.length <= config.sources.maxHooks);
      assert.ok(s.hooks.includes('Why do remote teams ship faster?'), JSON.stringify(s.hooks));
      const got = await call('GET', `/v1/sources/${s.id}`);
      assert.equal(got.status, 200);
      assert.deepEqual(got.body.data, s);
      // The whole text is never returned.
      assert.ok(!JSON.stringify(got.body).includes(text));
    });

    it('is idempotent: same key and body replay, another body conflicts', async () => {
      const headers = { 'Idempotency-Key': `src-${Date.now()}` };
      const body = { projectId: ws.project.id, type: 'text', text: 'Short note about hiring slowly and hiring well.' };
      const first = await call('POST', '/v1/sources', { body, headers });
      const replay = await call('POST', '/v1/sources', { body, headers });
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.equal(replay.body.data.id, first.body.data.id);
      assertError(await call('POST', '/v1/sources', { body: { ...body, text: 'other' }, headers }), 409, 'idempotency_key_conflict');
      assert.equal(
        Number(
          (
            await db()('sources')
              .where({ workspace_id: ws.workspace.id, name: body.text.slice(0, 80) })
              .count('* as n')
          )[0]!.n,
        ),
        1,
      );
    });

    it('refuses bad input with the spec codes and writes nothing', async () => {
      const before = Number((await db()('sources').where({ workspace_id: ws.workspace.id }).count('* as n'))[0]!.n);
      assertError(await call('POST', '/v1/sources', { body: { type: 'text', text: 'x' } }), 400, 'invalid_request');
      assertError(await call('POST', '/v1/sources', { body: { projectId: ws.project.id } }), 400, 'invalid_request');
      assertError(await call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'text' } }), 400, 'invalid_request');
      assertError(await call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'file' } }), 400, 'invalid_request');
      assertError(
        await call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'video', text: 'x' } }),
        422,
        'unprocessable',
      );
      assertError(
        await call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'text', text: 'x'.repeat(100_001) } }),
        413,
        'payload_too_large',
      );
      assertError(
        await call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'text', text: '   ' } }),
        422,
        'unprocessable',
      );
      assertError(await call('POST', '/v1/sources', { body: { projectId: 'proj_elsewhere', type: 'text', text: 'x' } }), 404, 'not_found');
      assertError(
        await call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'file', uploadId: 'upl_missing' } }),
        422,
        'unprocessable',
      );
      // An upload of another purpose is not a source's.
      const minted = await call('POST', '/v1/uploads', {
        body: { fileName: 'a.png', contentType: 'image/png', bytes: 70, purpose: 'media' },
      });
      await fetch(minted.body.data.url, { method: 'PUT', headers: minted.body.data.headers, body: pngBytes() });
      const wrong = assertError(
        await call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'file', uploadId: minted.body.data.id } }),
        422,
        'unprocessable',
      );
      assert.deepEqual(wrong.details, { uploadId: minted.body.data.id, reason: 'wrong_purpose', purpose: 'media', expected: 'source' });
      const after = Number((await db()('sources').where({ workspace_id: ws.workspace.id }).count('* as n'))[0]!.n);
      assert.equal(after, before);
    });

    it('another workspace reads not_found; a client-role account is refused with client_role (spec 5.4)', async () => {
      const s = (
        await call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'text', text: 'Private thoughts on pricing.' } })
      ).body.data;
      const other = await workspaceWithKey();
      assertError(await client(api.url, other.key)('GET', `/v1/sources/${s.id}`), 404, 'not_found');
      const c = client(api.url, await oauthToken(api.url, ws.workspace.id, { role: 'Client', scope: 'read write' }));
      for (const [method, path, body] of [
        ['GET', `/v1/sources/${s.id}`, undefined],
        ['POST', '/v1/sources', { projectId: ws.project.id, type: 'text', text: 'x' }],
      ] as const) {
        const err = assertError(await c(method, path, { body }), 403, 'forbidden_project');
        assert.equal(err.details?.reason, 'client_role', `${method} ${path}`);
      }
    });

    it('scopes: the REST read takes notes:read, the write sources:write (spec 4.1)', async () => {
      const s = (await call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'text', text: 'Scope check text.' } })).body
        .data;
      const reader = await workspaceWithKey({ scopes: ['notes:read'] });
      const readerOfOther = client(api.url, reader.key);
      assertError(await readerOfOther('GET', `/v1/sources/${s.id}`), 404, 'not_found');
      assertError(
        await readerOfOther('POST', '/v1/sources', { body: { projectId: reader.project.id, type: 'text', text: 'x' } }),
        403,
        'scope_missing',
      );
      const sourcesOnly = await workspaceWithKey({ scopes: ['sources:read'] });
      assertError(await client(api.url, sourcesOnly.key)('GET', `/v1/sources/${s.id}`), 403, 'scope_missing');
    });
  });

  describe('file sources (SOURCE_INGEST jobs)', () => {
    it('a QUEUED job can be cancelled (no worker yet): CANCELLED, and the source reads Failed', async () => {
      const uploadId = await upload(Buffer.from('Never read. This stays queued until cancelled.'), 'queued.txt', 'text/plain');
      const headers = { 'Idempotency-Key': `srcf-${Date.now()}` };
      const body = { projectId: ws.project.id, type: 'file', uploadId };
      const created = await call('POST', '/v1/sources', { body, headers });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const j = created.body.data;
      assert.match(j.id, /^job_/);
      assert.equal(j.type, 'SOURCE_INGEST');
      assert.equal(j.status, 'QUEUED');
      assert.equal(j.attemptCount, 0);
      const replay = await call('POST', '/v1/sources', { body, headers });
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.equal(replay.body.data.id, j.id);
      const cancelled = await call('POST', `/v1/jobs/${j.id}/cancel`);
      assert.equal(cancelled.body.data.status, 'CANCELLED');
      const sourceId = (await db()('sources').where({ job_id: j.id }).first()).id;
      const source = (await call('GET', `/v1/sources/${sourceId}`)).body.data;
      assert.equal(source.status, 'Failed');
      assert.equal(source.errorCode, 'job_cancelled');
      assert.equal(source.topics, undefined);
    });

    it('a PDF: extracted with unpdf, result { sourceId }, topics and hooks', async () => {
      await startWorker();
      const uploadId = await upload(pdfFixture(), 'notes.pdf', 'application/pdf');
      const created = await call('POST', '/v1/sources', {
        body: { projectId: ws.project.id, type: 'file', uploadId, wait_for_completion_ms: 20_000 },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const done = created.body.data.status === 'DONE' ? created.body.data : await finished(created.body.data.id);
      assert.equal(done.status, 'DONE', JSON.stringify(done));
      assert.equal(done.progress.progress, 1);
      assert.equal(done.attemptCount, 1);
      assert.deepEqual(Object.keys(done.result), ['sourceId']);
      const s = (await call('GET', `/v1/sources/${done.result.sourceId}`)).body.data;
      assert.equal(s.status, 'Success');
      assert.equal(s.type, 'file');
      assert.equal(s.fileName, 'notes.pdf');
      assert.equal(s.jobId, done.id);
      assert.match(s.preview, /shipping weekly beats shipping monthly/);
      assert.equal(s.previewTruncated, false);
      assert.equal(s.language, 'en');
      assert.ok(s.topics.includes('shipping'), JSON.stringify(s.topics));
      assert.ok(s.hooks.length >= 1);
      // The ingest workflow's id is the job id (docs/sources.md "The ingest job").
      await maybeRecordHistory(done.id, 'ingestSource-done');
    });

    it('a DOCX: extracted with mammoth (the declared type is not trusted)', async () => {
      const uploadId = await upload(docxFixture(), 'memo.docx', 'application/msword');
      const created = await call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'file', uploadId } });
      const done = await finished(created.body.data.id);
      assert.equal(done.status, 'DONE', JSON.stringify(done));
      const s = (await call('GET', `/v1/sources/${done.result.sourceId}`)).body.data;
      assert.match(s.preview, /^Hiring slowly is the best decision we made\./);
      assert.ok(s.topics.includes('hiring'), JSON.stringify(s.topics));
    });

    it('an audio file: transcribed by the transcription API (simulator), with language and duration', async () => {
      const spoken = 'Bonjour à tous. Aujourd’hui je parle de la planification des équipes et de la planification des produits.';
      const uploadId = await upload(wavWithTranscript(`LANG:fr;${spoken}`, 3), 'talk.wav', 'audio/wav');
      const created = await call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'file', uploadId, name: 'Keynote' } });
      const done = await finished(created.body.data.id);
      assert.equal(done.status, 'DONE', JSON.stringify(done));
      const s = (await call('GET', `/v1/sources/${done.result.sourceId}`)).body.data;
      assert.equal(s.name, 'Keynote');
      assert.equal(s.preview, spoken);
      assert.equal(s.language, 'fr');
      assert.equal(s.durationSeconds, 3);
      assert.ok(s.topics.includes('planification'), JSON.stringify(s.topics));
    });

    it('an unsupported file: the job ends FAILED with unsupported_media_type, the source Failed', async () => {
      // PNG bytes declared as text: sniffing, not the declared type, decides.
      const uploadId = await upload(pngBytes(), 'notes.txt', 'text/plain');
      const created = await call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'file', uploadId } });
      const failed = await finished(created.body.data.id);
      assert.equal(failed.status, 'FAILED');
      assert.equal(failed.errorCode, 'unsupported_media_type');
      assert.equal(failed.attemptCount, 1, 'not retried: another attempt cannot help');
      const s = (await db()('sources').where({ job_id: failed.id }).first()) as { id: string };
      const got = (await call('GET', `/v1/sources/${s.id}`)).body.data;
      assert.equal(got.status, 'Failed');
      assert.equal(got.errorCode, 'unsupported_media_type');
      await maybeRecordHistory(failed.id, 'ingestSource-failed-not-retryable');
    });

    it('the same upload submitted twice is ingested once (de-duplication by uploadId)', async () => {
      const uploadId = await upload(
        Buffer.from('One file, one ingest. Submitting it again returns the same job.'),
        'once.md',
        'text/markdown',
      );
      const body = { projectId: ws.project.id, type: 'file', uploadId };
      const [a, b] = await Promise.all([call('POST', '/v1/sources', { body }), call('POST', '/v1/sources', { body })]);
      assert.equal(a.body.data.id, b.body.data.id, 'concurrent submits share one job');
      const done = await finished(a.body.data.id);
      assert.equal(done.status, 'DONE');
      const again = await call('POST', '/v1/sources', { body });
      assert.equal(again.body.data.id, done.id);
      assert.equal(again.body.data.status, 'DONE');
      assert.equal(Number((await db()('sources').where({ upload_id: uploadId }).count('* as n'))[0]!.n), 1);
      assert.equal(Number((await db()('jobs').whereRaw(`input->>'uploadId' = ?`, [uploadId]).count('* as n'))[0]!.n), 1);
    });

    it('a transcription outage is retried; a refused credential fails at once with its code', async () => {
      const { startTranscriptionSim } = await import('../../sim/transcription/server');
      const ownSim = await startTranscriptionSim();
      try {
        const { HttpTranscriber } = await import('../../lib/ingest/transcription');
        const t = new HttpTranscriber({
          baseUrl: ownSim.url,
          model: 'whisper-1',
          timeoutMs: 2_000,
          pricePerMinute: config.transcription.pricePerMinute,
        });
        ownSim.failNext(1, 'server_error');
        await assert.rejects(t.transcribe({ bytes: wavWithTranscript('x'), mimeType: 'audio/wav', filename: 'a.wav' }), (e: any) => {
          assert.equal(e.code, 'transcription_unavailable');
          assert.equal(e.retryable, true);
          return true;
        });
        ownSim.failNext(1, 'auth');
        await assert.rejects(t.transcribe({ bytes: wavWithTranscript('x'), mimeType: 'audio/wav', filename: 'a.wav' }), (e: any) => {
          assert.equal(e.code, 'transcription_auth_failed');
          assert.equal(e.retryable, false);
          return true;
        });
        ownSim.failNext(1, 'hang');
        await assert.rejects(t.transcribe({ bytes: wavWithTranscript('x'), mimeType: 'audio/wav', filename: 'a.wav' }), (e: any) => {
          assert.equal(e.code, 'transcription_timeout');
          return true;
        });
        const ok = await t.transcribe({ bytes: wavWithTranscript('Hello world', 1), mimeType: 'audio/wav', filename: 'a.wav' });
        // A second of audio at whisper-1's price is a fraction of a cent: a billed call costs at least one.
        assert.deepEqual(ok, { text: 'Hello world', language: 'en', durationSeconds: 1, costCents: 1 });
        const last = ownSim.requests.at(-1)!;
        assert.equal(last.model, 'whisper-1');
        assert.equal(last.responseFormat, 'verbose_json');
        assert.equal(last.filename, 'a.wav');
      } finally {
        await ownSim.close();
      }
    });
  });
});
