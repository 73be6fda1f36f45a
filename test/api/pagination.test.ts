import assert from 'node:assert/strict';
import { db } from '../../lib/db';
import { client, type CallResult, useApi } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { assertError, insertPosts } from '../support/foundation';

// spec 4.4 GET /v1/posts: createdAt desc then id desc, cursor bound to the filters, limit
// 1..200 (default 50, larger values clamped), and the 400s that guard them.

type Call = ReturnType<typeof client>;

async function walk(
  call: Call,
  query: string,
  limit: number,
): Promise<{ ids: string[]; pages: number; rows: Array<{ id: string; createdAt: string }> }> {
  const rows: Array<{ id: string; createdAt: string }> = [];
  let cursor: string | null = null;
  let pages = 0;
  for (;;) {
    const res: CallResult = await call('GET', `/v1/posts?${query}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    pages += 1;
    rows.push(...res.body.data);
    const { has_more, next_cursor } = res.body.pagination;
    if (!has_more) {
      assert.equal(next_cursor, null, 'no cursor on the last page');
      break;
    }
    assert.equal(typeof next_cursor, 'string');
    assert.equal(res.body.data.length, limit, 'a page that is not the last is full');
    cursor = next_cursor;
    assert.ok(pages < 100, 'runaway pagination');
  }
  return { ids: rows.map((r) => r.id), pages, rows };
}

describe('post list pagination (spec 4.4)', function () {
  this.timeout(30_000);
  const api = useApi();

  it('returns every post exactly once in createdAt desc, id desc order, across ties', async () => {
    const { key, workspace, project } = await workspaceWithKey();
    const t0 = Date.parse('2026-01-10T12:00:00.000Z');
    // Three clusters of identical created_at plus singletons, so page borders fall inside ties.
    const rows = [
      ...Array.from({ length: 9 }, () => ({ createdAt: new Date(t0) })),
      ...Array.from({ length: 7 }, () => ({ createdAt: new Date(t0 - 1000) })),
      ...Array.from({ length: 4 }, (_, i) => ({ createdAt: new Date(t0 - 5000 - i) })),
      ...Array.from({ length: 6 }, () => ({ createdAt: new Date(t0 + 60_000) })),
    ];
    const ids = await insertPosts({ workspaceId: workspace.id, projectId: project.id, rows });
    const call = client(api.url, key);
    const expected: string[] = await db()('posts')
      .where({ project_id: project.id })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .pluck('id');
    assert.equal(expected.length, ids.length);

    for (const limit of [1, 4, 7, 26, 200]) {
      const got = await walk(call, `projectId=${project.id}`, limit);
      assert.equal(new Set(got.ids).size, got.ids.length, `duplicates at limit ${limit}`);
      assert.deepEqual(got.ids, expected, `order or completeness at limit ${limit}`);
      assert.equal(got.pages, Math.max(1, Math.ceil(ids.length / limit)));
      // The order is createdAt desc, then id desc within a tie, in the database's collation (as
      // `expected` reads them: bytewise on this machine's C.UTF-8, by locale under
      // TEST_DATABASE_ICU_LOCALE); the page's SQL both orders and starts after the cursor in it.
      for (let i = 1; i < got.rows.length; i++) {
        const dt = Date.parse(got.rows[i - 1]!.createdAt) - Date.parse(got.rows[i]!.createdAt);
        assert.ok(dt >= 0, `rows ${i - 1} and ${i} out of order`);
      }
    }
  });

  it('defaults limit to 50 and clamps values above 200', async () => {
    const { key, workspace, project } = await workspaceWithKey();
    const base = Date.now() - 3600_000;
    await insertPosts({
      workspaceId: workspace.id,
      projectId: project.id,
      rows: Array.from({ length: 205 }, (_, i) => ({ createdAt: new Date(base + i) })),
    });
    const call = client(api.url, key);
    const def = await call('GET', `/v1/posts?projectId=${project.id}`);
    assert.equal(def.body.data.length, 50);
    assert.equal(def.body.pagination.has_more, true);
    const big = await call('GET', `/v1/posts?projectId=${project.id}&limit=1000`);
    assert.equal(big.status, 200);
    assert.equal(big.body.data.length, 200);
    assert.equal(big.body.pagination.has_more, true);
    const last = await call(
      'GET',
      `/v1/posts?projectId=${project.id}&limit=200&cursor=${encodeURIComponent(big.body.pagination.next_cursor)}`,
    );
    assert.equal(last.body.data.length, 5);
    assert.equal(last.body.pagination.has_more, false);
    assert.equal(last.body.pagination.next_cursor, null);
  });

  it('answers a limit that is not an integer of at least 1 with 400 bad_pagination', async () => {
    const { key, project } = await workspaceWithKey();
    const call = client(api.url, key);
    for (const bad of ['abc', '0', '-1', '1.5', '1e2', ' ']) {
      assertError(await call('GET', `/v1/posts?projectId=${project.id}&limit=${encodeURIComponent(bad)}`), 400, 'bad_pagination');
    }
    // An empty value means "use the default".
    assert.equal((await call('GET', `/v1/posts?projectId=${project.id}&limit=`)).status, 200);
    assert.equal((await call('GET', `/v1/posts?projectId=${project.id}&limit=1`)).status, 200);
  });

  it('answers a cursor reused under other filters, or tampered with, with 400 bad_cursor', async () => {
    const { key, workspace, project, projects } = await workspaceWithKey({ projects: 2 });
    await insertPosts({
      workspaceId: workspace.id,
      projectId: project.id,
      rows: Array.from({ length: 5 }, (_, i) => ({ createdAt: new Date(Date.now() - i * 1000), status: 'draft' })),
    });
    const call = client(api.url, key);
    const first = await call('GET', `/v1/posts?projectId=${project.id}&status=draft,scheduled&limit=2`);
    assert.equal(first.status, 200);
    const cursor: string = first.body.pagination.next_cursor;
    assert.equal(typeof cursor, 'string');

    // The cursor works with the filters it was minted under; limit is not a filter, and the
    // same statuses in another order are the same filter.
    const next = await call('GET', `/v1/posts?projectId=${project.id}&status=draft,scheduled&limit=3&cursor=${encodeURIComponent(cursor)}`);
    assert.equal(next.status, 200);
    assert.equal(next.body.data.length, 3);
    assert.equal(
      (await call('GET', `/v1/posts?projectId=${project.id}&status=scheduled,draft&limit=2&cursor=${encodeURIComponent(cursor)}`)).status,
      200,
    );

    const changed = [
      `projectId=${project.id}&limit=2`,
      `projectId=${project.id}&status=draft&limit=2`,
      `projectId=${project.id}&status=draft,scheduled&dateFrom=2020-01-01&limit=2`,
      `projectId=${projects[1]!.id}&status=draft,scheduled&limit=2`,
    ];
    for (const q of changed) assertError(await call('GET', `/v1/posts?${q}&cursor=${encodeURIComponent(cursor)}`), 400, 'bad_cursor');

    // A cursor is a JWS (lib/tokens.ts): header.body.mac.
    const [header, body, mac] = cursor.split('.');
    assert.ok(header && body && mac, 'three JWS segments');
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const tampered = [
      `${header}.${flip(body!, 3)}.${mac}`,
      `${header}.${body}.${flip(mac!, 0)}`,
      `${flip(header!, 3)}.${body}.${mac}`,
      `${header}.${body}`,
      body!,
      'garbage',
      `${header}.${b64({ c: '2020-01-01T00:00:00.000Z', i: 'post_x', f: 'x' })}.${mac}`,
      // Unsigned (alg none) and signed for another purpose (a delete confirmation's typ).
      `${b64({ alg: 'none', typ: 'cursor' })}.${body}.`,
      `${b64({ alg: 'HS256', typ: 'post-delete-confirmation' })}.${body}.${mac}`,
    ];
    for (const t of tampered)
      assertError(
        await call('GET', `/v1/posts?projectId=${project.id}&status=draft,scheduled&limit=2&cursor=${encodeURIComponent(t)}`),
        400,
        'bad_cursor',
      );
  });

  it('answers a missing projectId or an unknown status with 400 invalid_request', async () => {
    const { key, project } = await workspaceWithKey();
    const call = client(api.url, key);
    assertError(await call('GET', '/v1/posts'), 400, 'invalid_request');
    assertError(await call('GET', '/v1/posts?limit=5'), 400, 'invalid_request');
    assertError(await call('GET', `/v1/posts?projectId=${project.id}&status=bogus`), 400, 'invalid_request');
    assertError(await call('GET', `/v1/posts?projectId=${project.id}&status=draft,bogus`), 400, 'invalid_request');
    assert.equal((await call('GET', `/v1/posts?projectId=${project.id}&status=draft,scheduled,failed_to_publish`)).status, 200);
    assertError(await call('GET', `/v1/posts?projectId=proj_${'0'.repeat(24)}`), 404, 'not_found');
  });

  it('filters by status and by createdAt date (inclusive, UTC days)', async () => {
    const { key, workspace, project } = await workspaceWithKey();
    const [d1] = await insertPosts({
      workspaceId: workspace.id,
      projectId: project.id,
      rows: [{ createdAt: new Date('2026-02-01T00:00:00.000Z'), status: 'draft' }],
    });
    const [d2] = await insertPosts({
      workspaceId: workspace.id,
      projectId: project.id,
      rows: [{ createdAt: new Date('2026-02-02T23:59:59.999Z'), status: 'scheduled' }],
    });
    const [d3] = await insertPosts({
      workspaceId: workspace.id,
      projectId: project.id,
      rows: [{ createdAt: new Date('2026-02-03T00:00:00.000Z'), status: 'published' }],
    });
    const call = client(api.url, key);
    const ids = async (q: string) =>
      (await call('GET', `/v1/posts?projectId=${project.id}&${q}`)).body.data.map((p: { id: string }) => p.id);
    assert.deepEqual(await ids('dateFrom=2026-02-01&dateTo=2026-02-02'), [d2, d1]);
    assert.deepEqual(await ids('dateFrom=2026-02-02'), [d3, d2]);
    assert.deepEqual(await ids('dateTo=2026-02-01'), [d1]);
    assert.deepEqual(await ids('status=published,draft'), [d3, d1]);
    assertError(await call('GET', `/v1/posts?projectId=${project.id}&dateFrom=2026-02-30`), 400, 'invalid_request');
    assertError(await call('GET', `/v1/posts?projectId=${project.id}&dateFrom=2026-02-01T00:00:00Z`), 400, 'invalid_request');
  });
});
