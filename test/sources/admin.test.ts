import assert from 'node:assert/strict';
import type { NativeConnection } from '@temporalio/worker';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { createWorker, type ServiceWorker } from '../../workers/worker';
import { fails, ok } from '../support/admin';
import { client, startApi, type TestServer } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { waitFor } from '../support/wait';
import { wavWithTranscript } from './files';

// bin/admin sources (docs/sources.md "Operating"): list and inspect a source with its ingest
// job, and run a failed ingest again, as operators run the CLI (a process per command).

describe('bin/admin sources', function () {
  this.timeout(180_000);
  let api: TestServer;
  let current: { worker: ServiceWorker; connection: NativeConnection; running: Promise<void> };
  before(async () => {
    api = await startApi();
    const { worker, connection } = await createWorker();
    current = { worker, connection, running: worker.run() };
  });
  after(async () => {
    current.worker.shutdown();
    await current.running;
    await current.connection.close();
    await api.close();
  });

  it('a failed transcription is listed, inspected and run again to Success', async () => {
    const ws = await workspaceWithKey();
    const call = client(api.url, ws.key);
    const wav = wavWithTranscript('The second attempt hears this recording clearly.', 1);
    const minted = (
      await call('POST', '/v1/uploads', { body: { fileName: 'retry.wav', contentType: 'audio/wav', bytes: wav.length, purpose: 'source' } })
    ).body.data;
    assert.equal((await fetch(minted.url, { method: 'PUT', headers: minted.headers, body: wav })).status, 200);
    // The transcription simulator refuses the credential once: not retryable, the job fails.
    const control = new URL(config.transcription.url!).origin;
    assert.equal((await fetch(`${control}/__sim/fail`, { method: 'POST', body: JSON.stringify({ times: 1, kind: 'auth' }) })).status, 200);
    const created = (await call('POST', '/v1/sources', { body: { projectId: ws.project.id, type: 'file', uploadId: minted.id } })).body
      .data;
    const failed = await waitFor(async () => {
      const j = (await call('GET', `/v1/jobs/${created.id}`)).body.data;
      return j.status === 'FAILED' && j;
    }, 60_000);
    assert.equal(failed.errorCode, 'transcription_auth_failed');

    const listed = await ok(['sources', 'list', '--workspace', ws.workspace.id, '--status', 'Failed']);
    assert.equal(listed.length, 1);
    const sourceId = listed[0].id;
    assert.equal(listed[0].errorCode, 'transcription_auth_failed');
    const inspected = await ok(['sources', 'inspect', '--source', sourceId]);
    assert.equal(inspected.job.id, created.id);
    assert.equal(inspected.uploadId, minted.id);

    const rerun = await ok(['sources', 'rerun', '--source', sourceId]);
    assert.notEqual(rerun.job.id, created.id);
    assert.equal(rerun.job.type, 'SOURCE_INGEST');
    // The rerun starts its job through the one enqueue path (lib/jobs/queue.ts), which records the
    // start as the API does, so the reconciler never looks at it again.
    const mark = await db()('jobs').where({ id: rerun.job.id }).first('workflow_started_at');
    assert.ok(mark?.workflow_started_at instanceof Date, 'the rerun records its workflow start');
    const done = await waitFor(async () => {
      const j = (await call('GET', `/v1/jobs/${rerun.job.id}`)).body.data;
      return j.status === 'DONE' && j;
    }, 60_000);
    assert.deepEqual(done.result, { sourceId });
    const source = (await call('GET', `/v1/sources/${sourceId}`)).body.data;
    assert.equal(source.status, 'Success');
    assert.equal(source.preview, 'The second attempt hears this recording clearly.');
    assert.equal(source.jobId, rerun.job.id);
    assert.equal((await ok(['sources', 'inspect', '--source', sourceId])).attempts.length, 2);
    // Only a failed ingest runs again.
    await fails(['sources', 'rerun', '--source', sourceId], 1, /is DONE; only a FAILED or CANCELLED ingest is run again/);
    await fails(['sources', 'inspect', '--source', 'src_missing'], 1, /no source src_missing/);
  });
});
