import assert from 'node:assert/strict';
import { createProject } from '../../admin/provision';
import { db } from '../../lib/db';
import { client, useApi } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';

// spec 2.8 / 4.3: a note always comes with its calendar slot, either the time given or the
// next queued weekday 09:00 in the project's timezone; a clientId makes create retry-safe.

const TZ = 'America/New_York';

function wallClock(iso: string, timeZone: string) {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    weekday: 'short',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(iso));
  const get = (t: string) => parts.find((p) => p.type === t)?.value;
  return { weekday: get('weekday'), time: `${get('hour')}:${get('minute')}:${get('second')}` };
}

describe('notes (spec 2.8, 4.3)', () => {
  const api = useApi();

  it('creates a note with an explicit slot date and reads it back', async () => {
    const { key, project } = await workspaceWithKey();
    const call = client(api.url, key);
    const res = await call('POST', '/v1/notes', {
      body: { projectId: project.id, content: 'Idea: a thread on hiring', slotDate: '2031-03-04T10:30:00Z' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.headers.get('idempotent-replayed'), 'false');
    const n = res.body.data;
    assert.match(n.id, /^note_/);
    assert.equal(n.projectId, project.id);
    assert.equal(n.content, 'Idea: a thread on hiring');
    assert.deepEqual(n.slot, { date: '2031-03-04T10:30:00.000Z', contentType: 'PERSONAL' });
    assert.equal(typeof n.createdAt, 'string');
    assert.equal(typeof n.updatedAt, 'string');

    const got = await call('GET', `/v1/notes/${n.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body.data, n);
    assertError(await call('GET', `/v1/notes/note_${'0'.repeat(24)}`), 404, 'not_found');
  });

  it('reads an offset-less slotDate in the project timezone', async () => {
    const { key, workspace } = await workspaceWithKey();
    const ny = await createProject({ workspaceId: workspace.id, type: 'PERSONAL_BRAND', name: 'NY', timezone: TZ });
    const res = await client(api.url, key)('POST', '/v1/notes', {
      body: { projectId: ny.id, content: 'x', slotDate: '2031-07-01T09:00:00', contentType: 'EDUCATIONAL' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.data.slot, { date: '2031-07-01T13:00:00.000Z', contentType: 'EDUCATIONAL' });
  });

  it('queues a note without slotDate on the next weekday 09:00 in the project timezone', async () => {
    const { key, workspace } = await workspaceWithKey();
    const ny = await createProject({ workspaceId: workspace.id, type: 'PERSONAL_BRAND', name: 'NY queue', timezone: TZ });
    const call = client(api.url, key);
    const slots: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await call('POST', '/v1/notes', { body: { projectId: ny.id, content: `queued ${i}` } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      slots.push(res.body.data.slot.date);
    }
    for (const s of slots) {
      const w = wallClock(s, TZ);
      assert.equal(w.time, '09:00:00', `${s} is ${w.time} in ${TZ}`);
      assert.ok(!['Sat', 'Sun'].includes(w.weekday!), `${s} falls on ${w.weekday}`);
    }
    assert.ok(Date.parse(slots[0]!) > Date.now(), 'the first slot is in the future');
    assert.ok(Date.parse(slots[0]!) < Date.now() + 5 * 86_400_000, 'and within the next few days');
    assert.ok(
      Date.parse(slots[1]!) > Date.parse(slots[0]!) && Date.parse(slots[2]!) > Date.parse(slots[1]!),
      'each queued note takes a later slot',
    );
  });

  it('queues after the project’s last slot: same day when 09:00 is still ahead, skipping weekends, across DST', async () => {
    const { key, workspace } = await workspaceWithKey();
    const ny = await createProject({ workspaceId: workspace.id, type: 'PERSONAL_BRAND', name: 'NY later', timezone: TZ });
    const call = client(api.url, key);
    const queueAfter = async (slotDate: string) => {
      const placed = await call('POST', '/v1/notes', { body: { projectId: ny.id, content: `at ${slotDate}`, slotDate } });
      assert.equal(placed.status, 200, JSON.stringify(placed.body));
      const queued = await call('POST', '/v1/notes', { body: { projectId: ny.id, content: `after ${slotDate}` } });
      assert.equal(queued.status, 200, JSON.stringify(queued.body));
      return queued.body.data.slot.date as string;
    };
    // Monday 2031-03-03 07:00 in New York: that Monday's 09:00 (EST) is still free.
    assert.equal(await queueAfter('2031-03-03T07:00:00'), '2031-03-03T14:00:00.000Z');
    // Monday 15:00: the next one is Tuesday 09:00.
    assert.equal(await queueAfter('2031-03-03T15:00:00'), '2031-03-04T14:00:00.000Z');
    // Friday 09:00 before the 2031-03-09 change: Monday 09:00 EDT, after the weekend.
    assert.equal(await queueAfter('2031-03-07T09:00:00'), '2031-03-10T13:00:00.000Z');
  });

  it('de-duplicates creates that carry the same clientId', async () => {
    const { key, project } = await workspaceWithKey();
    const call = client(api.url, key);
    const body = { projectId: project.id, content: 'retry-safe', clientId: 'agent-note-1' };
    const first = await call('POST', '/v1/notes', { body });
    const second = await call('POST', '/v1/notes', { body });
    const concurrent = await Promise.all([1, 2, 3].map(() => call('POST', '/v1/notes', { body: { ...body, clientId: 'agent-note-2' } })));
    assert.equal(first.status, 200);
    assert.equal(second.status, 200);
    assert.equal(second.body.data.id, first.body.data.id);
    assert.equal(new Set(concurrent.map((r) => r.body.data.id)).size, 1);
    assert.ok(concurrent.every((r) => r.status === 200 && r.body.data.slot !== null));
    const notes = await db()('notes').where({ project_id: project.id }).select('id', 'client_id');
    assert.equal(notes.length, 2);
    const [{ n }] = await db()('calendar_slots').where({ project_id: project.id }).whereNotNull('note_id').count({ n: '*' });
    assert.equal(Number(n), 2, 'one slot per note');
    // A clientId is scoped to its project.
    const { key: key2, workspace: w2 } = await workspaceWithKey();
    const p2 = await createProject({ workspaceId: w2.id, type: 'PERSONAL_BRAND', name: 'other' });
    const elsewhere = await client(api.url, key2)('POST', '/v1/notes', { body: { ...body, projectId: p2.id } });
    assert.notEqual(elsewhere.body.data.id, first.body.data.id);
  });

  it('lists notes of a project filtered by slot date', async () => {
    const { key, project } = await workspaceWithKey();
    const call = client(api.url, key);
    const make = async (slotDate: string) =>
      (await call('POST', '/v1/notes', { body: { projectId: project.id, content: slotDate, slotDate } })).body.data.id as string;
    const march4 = await make('2031-03-04T10:00:00Z');
    const march10 = await make('2031-03-10T23:30:00Z');
    const march11 = await make('2031-03-11T00:00:00Z');
    const ids = async (q: string) => {
      const res = await call('GET', `/v1/notes?projectId=${project.id}${q}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return new Set(res.body.data.map((n: { id: string }) => n.id));
    };
    assert.deepEqual(await ids(''), new Set([march4, march10, march11]));
    assert.deepEqual(await ids('&dateFrom=2031-03-05'), new Set([march10, march11]));
    assert.deepEqual(await ids('&dateTo=2031-03-10'), new Set([march4, march10]));
    assert.deepEqual(await ids('&dateFrom=2031-03-10&dateTo=2031-03-10'), new Set([march10]));

    const paged = await call('GET', `/v1/notes?projectId=${project.id}&limit=2`);
    assert.equal(paged.body.data.length, 2);
    assert.equal(paged.body.pagination.has_more, true);
    const rest = await call(
      'GET',
      `/v1/notes?projectId=${project.id}&limit=2&cursor=${encodeURIComponent(paged.body.pagination.next_cursor)}`,
    );
    assert.equal(rest.body.data.length, 1);
    assert.equal(rest.body.pagination.has_more, false);
    assertError(
      await call(
        'GET',
        `/v1/notes?projectId=${project.id}&limit=2&dateFrom=2031-01-01&cursor=${encodeURIComponent(paged.body.pagination.next_cursor)}`,
      ),
      400,
      'bad_cursor',
    );
    assertError(await call('GET', '/v1/notes'), 400, 'invalid_request');
    assertError(await call('GET', `/v1/notes?projectId=${project.id}&dateFrom=2031-02-30`), 400, 'invalid_request');
  });

  it('refuses oversized, empty and malformed notes', async () => {
    const { key, project } = await workspaceWithKey();
    const call = client(api.url, key);
    assertError(
      await call('POST', '/v1/notes', { body: { projectId: project.id, content: 'x'.repeat(100_001) } }),
      413,
      'payload_too_large',
    );
    assertError(await call('POST', '/v1/notes', { body: { projectId: project.id, content: '   ' } }), 422, 'unprocessable');
    assertError(await call('POST', '/v1/notes', { body: { projectId: project.id } }), 422, 'unprocessable');
    assertError(
      await call('POST', '/v1/notes', { body: { projectId: project.id, content: 'x', slotDate: '2031-03-04' } }),
      422,
      'unprocessable',
    );
    assertError(await call('POST', '/v1/notes', { body: { projectId: `proj_${'0'.repeat(24)}`, content: 'x' } }), 404, 'not_found');
    // A folder id longer than the stored column is refused up front, not by the database.
    assertError(
      await call('POST', '/v1/notes', { body: { projectId: project.id, content: 'x', folderId: 'f'.repeat(41) } }),
      422,
      'unprocessable',
    );
    const inFolder = await call('POST', '/v1/notes', { body: { projectId: project.id, content: 'x', folderId: 'f'.repeat(40) } });
    assert.equal(inFolder.status, 200, JSON.stringify(inFolder.body));
    assert.equal(inFolder.body.data.folderId, 'f'.repeat(40));
    await db()('notes').where({ id: inFolder.body.data.id }).delete();
    const [{ n }] = await db()('notes').where({ project_id: project.id }).count({ n: '*' });
    assert.equal(Number(n), 0);
  });
});
