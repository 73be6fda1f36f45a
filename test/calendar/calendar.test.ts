import assert from 'node:assert/strict';
import { createProject, issueApiKey } from '../../admin/provision';
import { db } from '../../lib/db';
import { newId } from '../../lib/ids';
import { client } from '../support/app';
import { member, scheduledPostRow, workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';
import { register, startOAuthApi, tokenFor } from '../oauth/support';

// GET /v1/calendar (spec 4.1, 5.4; docs/calendar.md): calendar days in each project's own
// timezone, typed entries with ids, the client-role narrowing, and GET /v1/company-pages.

const NY = 'America/New_York';

describe('calendar and company pages', () => {
  let api: Awaited<ReturnType<typeof startOAuthApi>>;
  let clientId: string;
  const redirectUri = 'https://client.example.com/cb';
  before(async () => {
    api = await startOAuthApi();
    clientId = (await register(api.url, { client_name: 'Calendar client', redirect_uris: [redirectUri] })).body.client_id;
  });
  after(async () => {
    api.restore();
    await api.close();
  });

  const oauth = async (email: string, workspace: string, project: string) =>
    (await tokenFor(api.url, { clientId, redirectUri, email, scope: 'read write', access: 'full', workspace, project })).access_token;

  /** A New York project with one entry of every kind around 2031-03-03..04, and a UTC project. */
  async function plannedWorkspace() {
    const ws = await workspaceWithKey();
    const call = client(api.url, ws.key);
    const ny = await createProject({ workspaceId: ws.workspace.id, type: 'PERSONAL_BRAND', name: 'New York', timezone: NY });
    const utc = ws.project;
    const post = async (projectId: string, scheduledFor: string, content = 'p') => {
      const res = await call('POST', '/v1/posts', { body: { projectId, content, scheduledFor } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data.id as string;
    };
    const ids = {
      // 2031-03-03 23:30 in New York (EST, UTC-5) is 2031-03-04 04:30 UTC: it belongs to the 3rd there.
      lateMonday: await post(ny.id, '2031-03-03T23:30:00'),
      tuesdayEvening: await post(ny.id, '2031-03-05T03:00:00Z'), // 2031-03-04 22:00 New York
      wednesdayNight: await post(ny.id, '2031-03-05T06:00:00Z'), // 2031-03-05 01:00 New York: outside
      sundayNight: await post(ny.id, '2031-03-03T04:00:00Z'), // 2031-03-02 23:00 New York: outside
      failed: await post(ny.id, '2031-03-04T15:00:00Z'),
      published: await post(ny.id, '2031-03-04T14:00:00Z'),
      draft: (await call('POST', '/v1/posts', { body: { projectId: ny.id, content: 'planned draft', title: 'Planned' } })).body.data
        .id as string,
      inReview: (await call('POST', '/v1/posts', { body: { projectId: ny.id, content: 'in review' } })).body.data.id as string,
      unslotted: (await call('POST', '/v1/posts', { body: { projectId: ny.id, content: 'no slot' } })).body.data.id as string,
      note: (await call('POST', '/v1/notes', { body: { projectId: ny.id, content: 'Note on Tuesday', slotDate: '2031-03-04T09:00:00' } }))
        .body.data.id as string,
      idea: (await call('POST', '/v1/ideas', { body: { projectId: ny.id, title: 'Idea for Tuesday', scheduledFor: '2031-03-04' } })).body
        .data.id as string,
      ideaLater: (await call('POST', '/v1/ideas', { body: { projectId: ny.id, title: 'Later idea', scheduledFor: '2031-03-05' } })).body
        .data.id as string,
      utcPost: await post(utc.id, '2031-03-04T04:30:00Z'),
    };
    await db()('posts').where({ id: ids.failed }).update({ status: 'failed_to_publish' });
    await db()('posts')
      .where({ id: ids.published })
      .update({ status: 'published', published_at: new Date('2031-03-04T14:02:00Z') });
    await db()('posts').where({ id: ids.inReview }).update({ status: 'waitingApproval' });
    for (const [postId, date] of [
      [ids.draft, '2031-03-04T13:00:00Z'],
      [ids.inReview, '2031-03-03T17:00:00Z'],
    ] as const) {
      await db()('calendar_slots').insert({
        id: newId('slot'),
        workspace_id: ws.workspace.id,
        project_id: ny.id,
        date,
        content_type: 'EDUCATIONAL',
        post_id: postId,
      });
    }
    return { ...ws, call, ny, utc, ids };
  }

  it('answers typed entries of one project on its own calendar days', async () => {
    const w = await plannedWorkspace();
    const res = await w.call('GET', `/v1/calendar?projectId=${w.ny.id}&from=2031-03-03&to=2031-03-04`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const d = res.body.data;
    assert.equal(d.from, '2031-03-03');
    assert.equal(d.to, '2031-03-04');
    assert.deepEqual(d.projects, [{ id: w.ny.id, name: 'New York', type: 'PERSONAL_BRAND', timezone: NY }]);
    assert.equal(d.truncated, false);
    const summary = d.entries.map((e: any) => [e.type, e.id, e.date, e.time ?? null]);
    assert.deepEqual(
      summary,
      [
        ['draft', w.ids.inReview, '2031-03-03', '12:00'],
        ['post', w.ids.lateMonday, '2031-03-03', '23:30'],
        ['note', w.ids.note, '2031-03-04', '09:00'],
        ['draft', w.ids.draft, '2031-03-04', '08:00'],
        ['post', w.ids.published, '2031-03-04', '09:02'],
        ['post', w.ids.failed, '2031-03-04', '10:00'],
        ['post', w.ids.tuesdayEvening, '2031-03-04', '22:00'],
        ['idea', w.ids.idea, '2031-03-04', null],
      ].sort(
        (a, b) => (a[2]! < b[2]! ? -1 : a[2]! > b[2]! ? 1 : 0) || (a[0] === 'idea' ? 1 : b[0] === 'idea' ? -1 : a[3]! < b[3]! ? -1 : 1),
      ),
    );
    const late = d.entries.find((e: any) => e.id === w.ids.lateMonday);
    assert.deepEqual(late, {
      type: 'post',
      id: w.ids.lateMonday,
      projectId: w.ny.id,
      at: '2031-03-04T04:30:00.000Z',
      date: '2031-03-03',
      time: '23:30',
      status: 'scheduled',
      title: late.title,
      contentType: 'PERSONAL',
    });
    const draft = d.entries.find((e: any) => e.id === w.ids.draft);
    assert.equal(draft.status, 'draft');
    assert.equal(draft.title, 'Planned');
    assert.equal(draft.contentType, 'EDUCATIONAL');
    assert.match(draft.slotId, /^slot_/);
    const note = d.entries.find((e: any) => e.type === 'note');
    assert.equal(note.content, 'Note on Tuesday');
    assert.deepEqual(
      d.entries.find((e: any) => e.type === 'idea'),
      { type: 'idea', id: w.ids.idea, projectId: w.ny.id, date: '2031-03-04', title: 'Idea for Tuesday', status: 'inbox' },
    );
    assert.equal(
      d.entries.find((e: any) => e.id === w.ids.published).at,
      '2031-03-04T14:02:00.000Z',
      'published posts sit at their publish time',
    );
    assert.ok(
      !d.entries.some((e: any) =>
        [w.ids.unslotted, w.ids.wednesdayNight, w.ids.sundayNight, w.ids.ideaLater, w.ids.utcPost].includes(e.id),
      ),
    );
  });

  it('formats its entries with one date formatter per timezone, not one per entry', async () => {
    const w = await plannedWorkspace();
    // The API runs in this process: count the formatters built while it answers.
    const Original = Intl.DateTimeFormat;
    let built = 0;
    Intl.DateTimeFormat = new Proxy(Original, {
      construct(target, args) {
        built++;
        return Reflect.construct(target, args);
      },
    });
    let entries: number;
    try {
      const res = await w.call('GET', '/v1/calendar?from=2031-03-01&to=2031-03-07');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      entries = res.body.data.entries.length;
    } finally {
      Intl.DateTimeFormat = Original;
    }
    assert.ok(entries >= 8, `entries: ${entries}`);
    // Two projects, two timezones: at most one formatter each (none once they are kept).
    assert.ok(built <= 2, `built ${built} formatters for ${entries} entries`);
  });

  it('reads every visible project when projectId is omitted, each in its own timezone', async () => {
    const w = await plannedWorkspace();
    const res = await w.call('GET', '/v1/calendar?from=2031-03-04&to=2031-03-04');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const ids = res.body.data.entries.map((e: any) => e.id);
    // 04:30 UTC on the 4th is the 4th in UTC but the 3rd in New York.
    assert.ok(ids.includes(w.ids.utcPost));
    assert.ok(!ids.includes(w.ids.lateMonday));
    assert.ok(ids.includes(w.ids.tuesdayEvening));
    assert.deepEqual(new Set(res.body.data.projects.map((p: any) => p.id)), new Set([w.ny.id, w.utc.id]));
    assert.equal(res.body.data.entries.find((e: any) => e.id === w.ids.utcPost).time, '04:30');
  });

  it('over 5,000 entries: the earliest 5,000, whatever order the rows were written in', async () => {
    const ws = await workspaceWithKey();
    // 5,003 scheduled posts a minute apart from 2031-05-01 00:00 UTC, inserted latest first, so
    // the heap's order is the reverse of the calendar's.
    const at = (i: number) => new Date(Date.UTC(2031, 4, 1) + i * 60_000);
    const rows = Array.from({ length: 5_003 }, (_, k) => 5_002 - k).map((i) =>
      scheduledPostRow(ws, `post_cal${String(i).padStart(6, '0')}`, at(i)),
    );
    for (let i = 0; i < rows.length; i += 1_000) await db()('posts').insert(rows.slice(i, i + 1_000));
    const res = await client(api.url, ws.key)('GET', `/v1/calendar?projectId=${ws.project.id}&from=2031-05-01&to=2031-05-07`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const entries = res.body.data.entries as Array<{ id: string; at: string }>;
    assert.equal(res.body.data.truncated, true);
    assert.equal(entries.length, 5_000);
    assert.equal(entries[0]!.at, at(0).toISOString());
    assert.equal(entries[4_999]!.at, at(4_999).toISOString(), 'the last kept is the 5,000th by time');
  });

  it('pages: limit and cursor walk the same entries as one answer, across timezones and ties', async () => {
    // Three projects whose days begin 25 hours apart (UTC+14, UTC, UTC-11), each with posts,
    // planned drafts and notes around 2031-06-01..03, many at one shared instant (ties across
    // kinds and projects), and ideas on each day: every page boundary lands somewhere awkward.
    const ws = await workspaceWithKey();
    const call = client(api.url, ws.key);
    const inZone = (name: string, timezone: string) =>
      createProject({ workspaceId: ws.workspace.id, type: 'PERSONAL_BRAND', name, timezone });
    const [east, west] = [await inZone('Line Islands', 'Pacific/Kiritimati'), await inZone('Samoa', 'Pacific/Pago_Pago')];
    const instants = [
      '2031-05-31T10:00:00Z',
      '2031-06-01T11:00:00Z',
      '2031-06-01T11:00:00Z',
      '2031-06-02T09:59:00Z',
      '2031-06-02T23:30:00Z',
      '2031-06-03T10:59:00Z',
      '2031-06-04T10:30:00Z',
    ];
    let n = 0;
    for (const projectId of [east.id, ws.project.id, west.id]) {
      for (const [k, at] of instants.entries()) {
        const postId = `post_page${String(n++).padStart(4, '0')}`;
        const draft = k % 3 === 1;
        await db()('posts').insert(
          scheduledPostRow(
            { workspace: ws.workspace, project: { id: projectId } },
            postId,
            new Date(at),
            draft ? { status: 'draft', scheduled_at: null } : {},
          ),
        );
        if (draft)
          await db()('calendar_slots').insert({
            id: newId('slot'),
            workspace_id: ws.workspace.id,
            project_id: projectId,
            date: at,
            post_id: postId,
          });
        if (k % 2 === 0) {
          const noteId = newId('note');
          await db()('notes').insert({ id: noteId, workspace_id: ws.workspace.id, project_id: projectId, content: `note ${n}` });
          await db()('calendar_slots').insert({
            id: newId('slot'),
            workspace_id: ws.workspace.id,
            project_id: projectId,
            date: at,
            note_id: noteId,
          });
        }
      }
      for (const date of ['2031-06-01', '2031-06-02', '2031-06-02', '2031-06-03']) {
        const res = await call('POST', '/v1/ideas', { body: { projectId, title: `idea ${date}`, scheduledFor: date } });
        assert.equal(res.status, 200, JSON.stringify(res.body));
      }
    }
    const range = 'from=2031-06-01&to=2031-06-03';
    const whole = await call('GET', `/v1/calendar?${range}`);
    assert.equal(whole.status, 200, JSON.stringify(whole.body));
    assert.equal(whole.body.data.truncated, false);
    assert.equal(whole.body.data.nextCursor, null);
    const all = whole.body.data.entries.map((e: any) => `${e.type} ${e.id} ${e.date}`);
    assert.ok(all.length > 30, `entries: ${all.length}`);
    for (const limit of [1, 2, 3, 7, 50]) {
      const walked: string[] = [];
      let cursor: string | null = null;
      for (let pages = 0; ; pages++) {
        assert.ok(pages <= all.length, `pages of ${limit} end`);
        const res: any = await call('GET', `/v1/calendar?${range}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const page = res.body.data.entries;
        assert.ok(page.length <= limit);
        walked.push(...page.map((e: any) => `${e.type} ${e.id} ${e.date}`));
        cursor = res.body.data.nextCursor;
        assert.equal(res.body.data.truncated, cursor !== null);
        if (cursor === null) break;
        assert.equal(page.length, limit, 'a page followed by another is full');
      }
      assert.deepEqual(walked, all, `pages of ${limit}`);
    }
    // A cursor reads on only in its own range; limit is checked.
    const first = await call('GET', `/v1/calendar?${range}&limit=2`);
    const cursor = encodeURIComponent(first.body.data.nextCursor);
    assertError(await call('GET', `/v1/calendar?from=2031-06-01&to=2031-06-04&limit=2&cursor=${cursor}`), 400, 'bad_cursor');
    assertError(await call('GET', `/v1/calendar?${range}&projectId=${west.id}&cursor=${cursor}`), 400, 'bad_cursor');
    assertError(await call('GET', `/v1/calendar?${range}&cursor=forged`), 400, 'bad_cursor');
    // Nor in another workspace's calendar, nor with another role (the client-role case below).
    assertError(await client(api.url, (await workspaceWithKey()).key)('GET', `/v1/calendar?${range}&cursor=${cursor}`), 400, 'bad_cursor');
    assertError(await call('GET', `/v1/calendar?${range}&limit=0`), 400, 'bad_pagination');
    assertError(await call('GET', `/v1/calendar?${range}&limit=two`), 400, 'bad_pagination');
  });

  it('bounds the range and checks its inputs', async () => {
    const w = await plannedWorkspace();
    const ok = await w.call('GET', `/v1/calendar?projectId=${w.ny.id}&from=2031-01-01&to=2031-03-03`);
    assert.equal(ok.status, 200, '62 days');
    const tooLong = assertError(
      await w.call('GET', `/v1/calendar?projectId=${w.ny.id}&from=2031-01-01&to=2031-03-04`),
      400,
      'invalid_request',
    );
    assert.equal(tooLong.details?.maxDays, 62);
    assertError(await w.call('GET', `/v1/calendar?projectId=${w.ny.id}&from=2031-03-05&to=2031-03-04`), 400, 'invalid_request');
    assertError(await w.call('GET', `/v1/calendar?projectId=${w.ny.id}&from=2031-02-30`), 400, 'invalid_request');
    assertError(await w.call('GET', `/v1/calendar?projectId=${w.ny.id}&when=today`), 400, 'invalid_request');
    const foreign = await workspaceWithKey();
    assertError(await w.call('GET', `/v1/calendar?projectId=${foreign.project.id}`), 404, 'not_found');
    // Default range: seven days from today.
    const dflt = await w.call('GET', `/v1/calendar?projectId=${w.ny.id}`);
    assert.equal(dflt.status, 200);
    assert.equal((Date.parse(dflt.body.data.to) - Date.parse(dflt.body.data.from)) / 86_400_000, 6);
  });

  it('scopes: posts:read; notes only with notes:read, ideas only with ideas:write', async () => {
    const w = await plannedWorkspace();
    const path = `/v1/calendar?projectId=${w.ny.id}&from=2031-03-03&to=2031-03-04`;
    const postsOnly = client(api.url, (await issueApiKey({ workspaceId: w.workspace.id, scopes: ['posts:read'] })).key);
    const types = new Set((await postsOnly('GET', path)).body.data.entries.map((e: any) => e.type));
    assert.deepEqual(types, new Set(['post', 'draft']));
    const withNotes = client(api.url, (await issueApiKey({ workspaceId: w.workspace.id, scopes: ['posts:read', 'notes:read'] })).key);
    assert.deepEqual(new Set((await withNotes('GET', path)).body.data.entries.map((e: any) => e.type)), new Set(['post', 'draft', 'note']));
    const none = client(api.url, (await issueApiKey({ workspaceId: w.workspace.id, scopes: ['notes:read'] })).key);
    assert.deepEqual(assertError(await none('GET', path), 403, 'scope_missing').details, { required_scope: 'posts:read' });
  });

  it('client role (spec 5.4): posts in review, scheduled or published only; no notes, no ideas', async () => {
    const w = await plannedWorkspace();
    const user = await member(w.workspace.id, 'Client', [w.ny.id]);
    const call = client(api.url, await oauth(user.email, w.workspace.id, w.ny.id));
    const res = await call('GET', '/v1/calendar?from=2031-03-03&to=2031-03-04');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.data.projects.map((p: any) => p.id),
      [w.ny.id],
      'only assigned projects',
    );
    // The failed post is still in the scheduled column (a failure does not move the board), so it
    // is in the client view here as in the post list (lib/models/Post.ts CLIENT_VIEW).
    assert.deepEqual(
      res.body.data.entries.map((e: any) => e.id).sort(),
      [w.ids.inReview, w.ids.lateMonday, w.ids.published, w.ids.failed, w.ids.tuesdayEvening].sort(),
    );
    const listed = await call('GET', `/v1/posts?projectId=${w.ny.id}`);
    assert.ok(listed.body.data.some((p: any) => p.id === w.ids.failed));
    assert.ok(!listed.body.data.some((p: any) => p.id === w.ids.draft));
    // An admin's OAuth token sees everything, like the API key.
    const admin = await member(w.workspace.id, 'Admin');
    const full = await client(api.url, await oauth(admin.email, w.workspace.id, w.ny.id))(
      'GET',
      `/v1/calendar?projectId=${w.ny.id}&from=2031-03-03&to=2031-03-04`,
    );
    assert.equal(full.body.data.entries.length, 8);
    // A cursor is the view's it was minted in: the admin's, walked on by the client, starts again.
    const adminPage = await client(api.url, await oauth(admin.email, w.workspace.id, w.ny.id))(
      'GET',
      `/v1/calendar?projectId=${w.ny.id}&from=2031-03-03&to=2031-03-04&limit=1`,
    );
    const cursor = encodeURIComponent(adminPage.body.data.nextCursor);
    assertError(
      await call('GET', `/v1/calendar?projectId=${w.ny.id}&from=2031-03-03&to=2031-03-04&limit=1&cursor=${cursor}`),
      400,
      'bad_cursor',
    );
  });

  it('GET /v1/company-pages: linked personal account, canPublish, cursor-paginated', async () => {
    const ws = await workspaceWithKey();
    const call = client(api.url, ws.key);
    const linked = await createProject({
      workspaceId: ws.workspace.id,
      type: 'COMPANY_PAGE',
      name: 'Acme Inc',
      username: 'acme',
      linkedProjectId: ws.project.id,
    });
    const unlinked = await createProject({ workspaceId: ws.workspace.id, type: 'COMPANY_PAGE', name: 'Orphan Ltd', connection: 'none' });
    const revoked = await createProject({ workspaceId: ws.workspace.id, type: 'COMPANY_PAGE', name: 'Gone GmbH', connection: 'revoked' });
    const all = await call('GET', '/v1/company-pages');
    assert.equal(all.status, 200, JSON.stringify(all.body));
    assert.deepEqual(
      all.body.data.map((p: any) => p.id),
      [revoked.id, unlinked.id, linked.id],
    );
    const [r, u, l] = all.body.data;
    assert.equal(l.type, 'COMPANY_PAGE');
    assert.equal(l.name, 'Acme Inc');
    assert.deepEqual(l.linkedAccount, { projectId: ws.project.id, name: ws.project.display_name, username: 'person-0' });
    assert.equal(l.canPublish, true);
    assert.equal(l.network.state, 'connected');
    assert.equal(u.linkedAccount, null);
    assert.equal(u.network, null);
    assert.equal(u.canPublish, false);
    assert.equal(r.linkedAccount.projectId, null, 'its admin account has no personal project here');
    assert.equal(r.canPublish, false);
    assert.ok(!all.body.data.some((p: any) => p.id === ws.project.id), 'personal projects are not company pages');

    const page1 = await call('GET', '/v1/company-pages?limit=2');
    assert.equal(page1.body.pagination.has_more, true);
    const page2 = await call('GET', `/v1/company-pages?limit=2&cursor=${page1.body.pagination.next_cursor}`);
    assert.deepEqual(
      [...page1.body.data, ...page2.body.data].map((p: any) => p.id),
      all.body.data.map((p: any) => p.id),
    );
    assert.equal(page2.body.pagination.has_more, false);
    assertError(await call('GET', '/v1/company-pages?limit=0'), 400, 'bad_pagination');
    assertError(await call('GET', '/v1/company-pages?cursor=forged'), 400, 'bad_cursor');

    // Client role reads projects normally (spec 5.4); a plain member sees assigned pages only.
    const user = await member(ws.workspace.id, 'Client', [linked.id]);
    const asClient = await client(api.url, await oauth(user.email, ws.workspace.id, linked.id))('GET', '/v1/company-pages');
    assert.equal(asClient.status, 200, JSON.stringify(asClient.body));
    assert.deepEqual(
      asClient.body.data.map((p: any) => p.id),
      [linked.id],
    );
    assert.equal(asClient.body.data[0].linkedAccount.projectId, null, 'the personal project is not assigned to this account');
  });
});
