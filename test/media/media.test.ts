import assert from 'node:assert/strict';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { storageUsed } from '../../lib/media/assets';
import { client } from '../support/app';
import { member, workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';
import { register, tokenFor, useOAuthApi } from '../oauth/support';
import { oauthToken } from '../oauth/support';
import { png, sha256 } from './images';

// spec 4.5 uploads, 4.7 the own-image import and the library, 4.4 PATCH /v1/posts/{id}/media,
// 2.16 storage meters, 9.4 the uploads version gate: over real HTTP against the embedded S3
// store (`npm test` runs it), Postgres and Redis.

describe('media: uploads, the own-image import and the library (spec 4.5, 4.7)', function () {
  this.timeout(60_000);
  const api = useOAuthApi();
  let ws: Awaited<ReturnType<typeof workspaceWithKey>>;
  let call: ReturnType<typeof client>;

  before(async () => {
    ws = await workspaceWithKey({ projects: 1 });
    call = client(api.url, ws.key);
  });

  const mint = (body: Record<string, unknown>, headers: Record<string, string> = {}, c = call) =>
    c('POST', '/v1/uploads', { body, headers });
  const put = (u: { url: string; headers: Record<string, string> }, bytes: Buffer, headers: Record<string, string> = u.headers) =>
    fetch(u.url, { method: 'PUT', headers, body: bytes });
  // spec 4.7: an API key names the project (only an OAuth token may lean on a pinned default).
  const inline = (bytes: Buffer, extra: Record<string, unknown> = {}, c = call, projectId = ws.projects[0]!.id) =>
    c('POST', '/v1/media', { body: { projectId, content_base64: bytes.toString('base64'), ...extra } });

  describe('POST /v1/uploads', () => {
    it('mints a presigned PUT; the bytes PUT there import as an asset whose type is the stored one', async () => {
      const image = png(40, 30);
      const res = await mint({ fileName: 'chart.png', contentType: 'image/png', bytes: image.length, purpose: 'media' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const u = res.body.data;
      assert.match(u.id, /^upl_[A-Za-z0-9]{24}$/);
      assert.equal(u.method, 'PUT');
      assert.match(u.url, /X-Amz-Signature=/);
      assert.match(u.url, /X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost/);
      assert.deepEqual(u.headers, { 'Content-Type': 'image/png', 'Content-Length': String(image.length) });
      assert.ok(Date.parse(u.expiresAt) > Date.now());
      assert.equal((await put(u, image)).status, 200);

      const imported = await call('POST', '/v1/media', {
        body: { projectId: ws.projects[0]!.id, uploadId: u.id, alt: 'A bar chart', title: 'Q3' },
      });
      assert.equal(imported.status, 200, JSON.stringify(imported.body));
      const a = imported.body.data;
      assert.match(a.id, /^med_/);
      assert.equal(a.mimeType, 'image/png');
      assert.equal(a.bytes, image.length);
      assert.equal(a.width, 40);
      assert.equal(a.height, 30);
      assert.equal(a.sha256, sha256(image));
      assert.equal(a.alt, 'A bar chart');
      assert.equal(a.title, 'Q3');
      assert.equal(a.fileName, 'chart.png');
      assert.equal(a.key, `${ws.workspace.id}/media/${sha256(image)}.png`);
    });

    it('the store itself refuses a PUT with another content type (403 SignatureDoesNotMatch)', async () => {
      const image = png(8, 8);
      const u = (await mint({ fileName: 'a.png', contentType: 'image/png', bytes: image.length, purpose: 'media' })).body.data;
      const refused = await put(u, image, { ...u.headers, 'Content-Type': 'image/jpeg' });
      assert.equal(refused.status, 403);
      assert.match(await refused.text(), /SignatureDoesNotMatch/);
      // And nothing was stored: the handle still has no object.
      const err = assertError(
        await call('POST', '/v1/media', { body: { projectId: ws.projects[0]!.id, uploadId: u.id } }),
        422,
        'unprocessable',
      );
      assert.equal(err.details?.reason, 'upload_without_object');
    });

    it('the store refuses a PUT of another size than declared', async () => {
      const image = png(8, 8);
      const u = (await mint({ fileName: 'a.png', contentType: 'image/png', bytes: image.length + 10, purpose: 'media' })).body.data;
      const refused = await fetch(u.url, { method: 'PUT', headers: { 'Content-Type': 'image/png' }, body: image });
      assert.equal(refused.status, 403);
    });

    it('a never-PUT, an expired and an unknown or foreign handle answer 422 unprocessable', async () => {
      const image = png(9, 9);
      const never = (await mint({ fileName: 'a.png', contentType: 'image/png', bytes: image.length, purpose: 'media' })).body.data;
      assert.equal(
        assertError(await call('POST', '/v1/media', { body: { projectId: ws.projects[0]!.id, uploadId: never.id } }), 422, 'unprocessable')
          .details?.reason,
        'upload_without_object',
      );

      const expired = (await mint({ fileName: 'b.png', contentType: 'image/png', bytes: image.length, purpose: 'media' })).body.data;
      assert.equal((await put(expired, image)).status, 200);
      await db()('uploads')
        .where({ id: expired.id })
        .update({ expires_at: new Date(Date.now() - 1000) });
      assert.equal(
        assertError(
          await call('POST', '/v1/media', { body: { projectId: ws.projects[0]!.id, uploadId: expired.id } }),
          422,
          'unprocessable',
        ).details?.reason,
        'upload_expired',
      );

      assertError(
        await call('POST', '/v1/media', { body: { projectId: ws.projects[0]!.id, uploadId: 'upl_doesnotexist000000000000' } }),
        422,
        'unprocessable',
      );
      const other = await workspaceWithKey({ projects: 0 });
      const foreign = (
        await mint({ fileName: 'c.png', contentType: 'image/png', bytes: image.length, purpose: 'media' }, {}, client(api.url, other.key))
      ).body.data;
      assert.equal((await put(foreign, image)).status, 200);
      assert.equal(
        assertError(
          await call('POST', '/v1/media', { body: { projectId: ws.projects[0]!.id, uploadId: foreign.id } }),
          422,
          'unprocessable',
        ).details?.reason,
        'unknown_upload',
      );

      // A handle of another purpose is refused as such, before the store is asked for its object.
      const source = (await mint({ fileName: 'd.txt', contentType: 'text/plain', bytes: 10, purpose: 'source' })).body.data;
      assert.deepEqual(
        assertError(await call('POST', '/v1/media', { body: { projectId: ws.projects[0]!.id, uploadId: source.id } }), 422, 'unprocessable')
          .details,
        { uploadId: source.id, reason: 'wrong_purpose', purpose: 'source', expected: 'media' },
      );
    });

    it('refuses a declared size over the per-type cap before minting anything', async () => {
      const before = Number((await db()('uploads').where({ workspace_id: ws.workspace.id }).count('* as n').first())!.n);
      const err = assertError(
        await mint({ fileName: 'huge.png', contentType: 'image/png', bytes: config.uploads.maxBytes.image + 1, purpose: 'media' }),
        413,
        'payload_too_large',
      );
      assert.equal(err.details?.limit, config.uploads.maxBytes.image);
      assertError(await mint({ fileName: 'x.pdf', contentType: 'application/pdf', bytes: 10, purpose: 'media' }), 422, 'unprocessable');
      assertError(await mint({ fileName: 'x.png', contentType: 'image/png', bytes: 10, purpose: 'media', extra: 1 }), 422, 'unprocessable');
      const after = Number((await db()('uploads').where({ workspace_id: ws.workspace.id }).count('* as n').first())!.n);
      assert.equal(after, before);
      // Another purpose takes other types.
      assert.equal((await mint({ fileName: 'talk.mp3', contentType: 'audio/mpeg', bytes: 5_000_000, purpose: 'source' })).status, 200);
      assert.equal(
        (await mint({ fileName: 'doc.pdf', contentType: 'application/pdf', bytes: 5_000_000, purpose: 'knowledge' })).status,
        200,
      );
    });

    it('version gate (spec 9.4): 2026-08-10 needs sources:write or knowledge:write, 2026-08-01 does not', async () => {
      const { key } = await workspaceWithKey({ scopes: ['posts:write', 'media:read'] });
      const k = client(api.url, key);
      const body = { fileName: 'a.png', contentType: 'image/png', bytes: 100, purpose: 'media' };
      const refused = assertError(await mint(body, { 'Service-Api-Version': '2026-08-10' }, k), 403, 'scope_missing');
      assert.equal(refused.details, undefined, 'a group-alternative refusal carries no details (spec 7.2)');
      assertError(await mint(body, {}, k), 403, 'scope_missing'); // the current default
      const old = await mint(body, { 'Service-Api-Version': '2026-08-01' }, k);
      assert.equal(old.status, 200, JSON.stringify(old.body));
      assert.equal(old.headers.get('service-api-version'), '2026-08-01');
      for (const scopes of [['knowledge:write'], ['sources:write']]) {
        const w = await workspaceWithKey({ scopes });
        assert.equal((await mint(body, { 'Service-Api-Version': '2026-08-10' }, client(api.url, w.key))).status, 200, scopes.join());
      }
    });
  });

  describe('POST /v1/media inline', () => {
    it('imports, reads the dimensions, infers the type from fileName and dedupes by SHA-256', async () => {
      const image = png(64, 48);
      const first = await inline(image, { fileName: 'photo.PNG', sha256: sha256(image).toUpperCase(), alt: 'Team photo' });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(first.body.data.width, 64);
      assert.equal(first.body.data.height, 48);
      assert.equal(first.body.data.mimeType, 'image/png');
      const again = await inline(image, { title: 'other title' });
      assert.equal(again.body.data.id, first.body.data.id, 'the same bytes are one asset');
      assert.deepEqual(again.body.data, first.body.data, 'the existing asset, as it was stored');
      assert.equal(
        await db()('media_assets')
          .where({ workspace_id: ws.workspace.id, sha256: sha256(image) })
          .count('* as n')
          .first()
          .then((r) => Number(r!.n)),
        1,
      );
    });

    it('projectId (spec 4.7): an API key must name it (400 invalid_request, nothing stored); an OAuth token may lean on its pinned project', async () => {
      const own = await workspaceWithKey({ projects: 2 });
      const keyed = client(api.url, own.key);
      const image = png(13, 7);
      const refused = assertError(
        await keyed('POST', '/v1/media', { body: { content_base64: image.toString('base64') } }),
        400,
        'invalid_request',
      );
      assert.equal(refused.details?.field, 'projectId');
      assert.equal(
        Number((await db()('media_assets').where({ workspace_id: own.workspace.id }).count('* as n').first())!.n),
        0,
        'nothing stored',
      );

      const pinned = own.projects[1]!;
      const user = await member(own.workspace.id, 'Admin');
      const redirectUri = 'http://localhost:8765/callback';
      const reg = await register(api.url, { client_name: 'Media default project', redirect_uris: [redirectUri] });
      const token = await tokenFor(api.url, {
        clientId: reg.body.client_id,
        redirectUri,
        email: user.email,
        scope: 'read write',
        access: 'full',
        workspace: own.workspace.id,
        project: pinned.id,
      });
      const viaOAuth = await client(api.url, token.access_token)('POST', '/v1/media', {
        body: { content_base64: image.toString('base64') },
      });
      assert.equal(viaOAuth.status, 200, JSON.stringify(viaOAuth.body));
      assert.equal(viaOAuth.body.data.projectId, pinned.id);
    });

    it('refuses a sha256 mismatch naming both digests', async () => {
      const image = png(5, 5);
      const wrong = 'a'.repeat(64);
      const err = assertError(await inline(image, { sha256: wrong }), 422, 'unprocessable');
      assert.ok(err.message.includes(wrong), err.message);
      assert.ok(err.message.includes(sha256(image)), err.message);
      assert.deepEqual(err.details, { declared: wrong, actual: sha256(image) });
    });

    it('checks the bytes, not the name: non-images and disagreeing declarations are 422', async () => {
      assertError(await inline(Buffer.from('%PDF-1.4 not an image at all, just text'), { fileName: 'fake.png' }), 422, 'unprocessable');
      const image = png(6, 6);
      const err = assertError(await inline(image, { mimeType: 'image/jpeg' }), 422, 'unprocessable');
      assert.equal(err.details?.detectedType, 'image/png');
      assertError(await inline(image, { fileName: 'photo.jpg' }), 422, 'unprocessable');
      assertError(await inline(image, { mimeType: 'application/pdf' }), 422, 'unprocessable');
      assertError(await inline(Buffer.alloc(0), { content_base64: 'not base64!' }), 422, 'unprocessable');
      assertError(await inline(image, { content_base64: `data:image/png;base64,${image.toString('base64')}` }), 422, 'unprocessable');
    });

    it('refuses base64 that Node would half-read: a foreign character, a space, an inner `=`, the URL alphabet', async () => {
      const image = png(9, 7);
      const b64 = image.toString('base64');
      assert.equal(b64.length % 4, 0);
      // Each keeps the length a multiple of four, so only the decoding itself can tell.
      const at = (i: number, c: string) => b64.slice(0, i) + c + b64.slice(i + 1);
      const urlSafe = b64.replace(/\+/g, '-').replace(/\//g, '_');
      assert.notEqual(urlSafe, b64, 'the sample has a + or a /');
      for (const bad of [at(10, '!'), at(10, ' '), at(10, '='), urlSafe]) {
        const err = assertError(await inline(image, { content_base64: bad }), 422, 'unprocessable');
        assert.match(err.message, /not valid base64/);
      }
      const { rows } = await db().raw('select count(*)::int as n from media_assets where workspace_id = ? and sha256 = ?', [
        ws.workspace.id,
        sha256(image),
      ]);
      assert.equal(rows[0].n, 0, 'nothing was imported');
      assert.equal((await inline(image)).status, 200, 'the same bytes in canonical base64 import');
    });

    it('takes exactly one of content_base64 or uploadId; sha256 and mimeType only inline (spec 4.7)', async () => {
      const image = png(4, 4);
      const u = (await mint({ fileName: 'a.png', contentType: 'image/png', bytes: image.length, purpose: 'media' })).body.data;
      assertError(await call('POST', '/v1/media', { body: {} }), 422, 'unprocessable');
      assertError(
        await call('POST', '/v1/media', { body: { content_base64: image.toString('base64'), uploadId: u.id } }),
        422,
        'unprocessable',
      );
      assertError(await call('POST', '/v1/media', { body: { uploadId: u.id, sha256: sha256(image) } }), 422, 'unprocessable');
      assertError(await call('POST', '/v1/media', { body: { uploadId: u.id, mimeType: 'image/png' } }), 422, 'unprocessable');
      assertError(await inline(image, { title: 't'.repeat(config.media.titleChars + 1) }), 413, 'payload_too_large');
      assertError(await inline(image, { alt: 'a'.repeat(config.media.altChars + 1) }), 413, 'payload_too_large');
      assertError(await inline(image, { fileName: `${'f'.repeat(config.media.fileNameChars)}.png` }), 413, 'payload_too_large');
      assert.equal(
        (await inline(image, { alt: 'a'.repeat(config.media.altChars), title: 't'.repeat(config.media.titleChars) })).status,
        200,
      );
    });

    it('the 3 MB edge: a larger body is a bare 413 before parsing; just over 3 MB decoded is 413 payload_too_large', async () => {
      const max = config.media.inlineMaxBytes;
      // Far over the edge: the body is not even read.
      const huge = Buffer.alloc(max * 2, 1);
      const res = await fetch(`${api.url}/v1/media`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ws.key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ content_base64: huge.toString('base64') }),
      });
      assert.equal(res.status, 413);
      const text = await res.text();
      assert.ok(!text.startsWith('{'), `a bare 413 has no JSON envelope: ${text.slice(0, 100)}`);
      // Not JSON at all, but over the edge: still the bare 413 (nothing was parsed).
      const junk = await fetch(`${api.url}/v1/media`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ws.key}`, 'Content-Type': 'application/json' },
        body: 'x'.repeat(max * 2),
      });
      assert.equal(junk.status, 413);
      // Within the edge but one byte over the decoded limit: the envelope.
      const over = Buffer.alloc(max + 1, 2);
      const err = assertError(await inline(over), 413, 'payload_too_large');
      assert.equal(err.details?.limit, max);
      // At the limit the body passes the edge and is judged on its content (a real image of 3 MB).
      const side = Math.floor(Math.sqrt((max - 200) / 3));
      const big = png(side, side);
      assert.ok(big.length <= max && big.length > max - 40_000, String(big.length));
      const ok = await inline(big);
      assert.equal(ok.status, 200, JSON.stringify(ok.body).slice(0, 300));
      assert.equal(ok.body.data.bytes, big.length);
    });
  });

  describe('the library', () => {
    it("lists newest first with a cursor, gets one, and answers 404 for another workspace's asset", async () => {
      const own = await workspaceWithKey({ projects: 1 });
      const c = client(api.url, own.key);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await inline(png(3 + i, 3), {}, c, own.projects[0]!.id)).body.data.id);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: any = await c('GET', `/v1/media?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        assert.equal(page.status, 200, JSON.stringify(page.body));
        assert.ok(page.body.data.length <= 2);
        seen.push(...page.body.data.map((a: { id: string }) => a.id));
        cursor = page.body.pagination.next_cursor;
        assert.equal(page.body.pagination.has_more, cursor !== null);
      } while (cursor);
      assert.deepEqual(seen, [...ids].reverse());
      const one = await c('GET', `/v1/media/${ids[0]}`);
      assert.equal(one.status, 200);
      assert.equal(one.body.data.id, ids[0]);
      assertError(await call('GET', `/v1/media/${ids[0]}`), 404, 'not_found');
      assertError(await c('GET', '/v1/media?limit=0'), 400, 'bad_pagination');
    });

    it('storage meters are real sums of the library, and an import over the plan limit is 402 usage_limit_exceeded', async () => {
      const own = await workspaceWithKey({ projects: 1, plan: 'ADVANCED' });
      const c = client(api.url, own.key);
      const a = png(10, 10);
      const b = png(11, 11);
      await inline(a, {}, c, own.projects[0]!.id);
      await inline(b, {}, c, own.projects[0]!.id);
      const usage = await c('GET', '/v1/usage');
      assert.equal(usage.status, 200, JSON.stringify(usage.body));
      const s = usage.body.data.storage;
      assert.equal(s.usedBytes, a.length + b.length);
      assert.equal(s.usedAssets, 2);
      assert.equal(s.limitBytes, config.plans.ADVANCED.storageLimitBytes);
      assert.equal(s.assetLimit, config.plans.ADVANCED.assetLimit);
      const plans = config.plans as Record<string, { assetLimit: number | null; storageLimitBytes: number | null }>;
      const saved = { ...plans.ADVANCED! };
      try {
        plans.ADVANCED!.assetLimit = 2;
        const err = assertError(await inline(png(12, 12), {}, c, own.projects[0]!.id), 402, 'usage_limit_exceeded');
        assert.equal(err.details?.meter, 'storage_assets');
        // The same bytes again are not a new asset: still fine at the limit.
        assert.equal((await inline(a, {}, c, own.projects[0]!.id)).status, 200);
        plans.ADVANCED!.assetLimit = null;
        plans.ADVANCED!.storageLimitBytes = a.length + b.length + 10;
        assert.equal(
          assertError(await inline(png(12, 12), {}, c, own.projects[0]!.id), 402, 'usage_limit_exceeded').details?.meter,
          'storage_bytes',
        );
        const used = a.length + b.length;
        assert.equal((await c('GET', '/v1/usage')).body.data.storage.percentUsed, Math.floor((used * 100) / (used + 10)));
      } finally {
        Object.assign(plans.ADVANCED!, saved);
      }
    });
    it('imports arriving at the same moment never overshoot the plan: exactly the limit is admitted', async () => {
      const own = await workspaceWithKey({ projects: 1, plan: 'ADVANCED' });
      const c = client(api.url, own.key);
      const plans = config.plans as Record<string, { assetLimit: number | null; storageLimitBytes: number | null }>;
      const saved = { ...plans.ADVANCED! };
      try {
        plans.ADVANCED!.assetLimit = 3;
        const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => inline(png(20 + i, 20 + i), {}, c, own.projects[0]!.id)));
        const admitted = answers.filter((r) => r.status === 200);
        assert.equal(admitted.length, 3, JSON.stringify(answers.map((r) => r.status)));
        for (const r of answers.filter((r) => r.status !== 200))
          assert.equal(assertError(r, 402, 'usage_limit_exceeded').details?.meter, 'storage_assets');
        const rows = await db()('media_assets').where({ workspace_id: own.workspace.id }).count<{ n: string }[]>('* as n');
        assert.equal(Number(rows[0]!.n), 3);
      } finally {
        Object.assign(plans.ADVANCED!, saved);
      }
    });
    it('20 imports at the byte limit at the same moment: the library never goes over it', async () => {
      const own = await workspaceWithKey({ projects: 1, plan: 'ADVANCED' });
      const c = client(api.url, own.key);
      const plans = config.plans as Record<string, { assetLimit: number | null; storageLimitBytes: number | null }>;
      const saved = { ...plans.ADVANCED! };
      const usedBytes = async () =>
        Number((await db()('media_assets').where({ workspace_id: own.workspace.id }).sum<{ s: string }[]>('bytes as s'))[0]!.s ?? 0);
      const images = Array.from({ length: 20 }, (_, i) => png(30 + i, 30 + i));
      try {
        assert.equal((await inline(png(29, 29), {}, c, own.projects[0]!.id)).status, 200);
        // At the limit exactly: none of the 20 fits.
        plans.ADVANCED!.storageLimitBytes = await usedBytes();
        const full = await Promise.all(images.map((b) => inline(b, {}, c, own.projects[0]!.id)));
        for (const r of full) assert.equal(assertError(r, 402, 'usage_limit_exceeded').details?.meter, 'storage_bytes');
        assert.equal(await usedBytes(), plans.ADVANCED!.storageLimitBytes);
        // Room for a few of them: whichever are admitted, the sum stays within the limit.
        const room = [...images.map((b) => b.length)].sort((a, b) => a - b).slice(0, 4);
        const limit = (await usedBytes()) + room.reduce((a, b) => a + b, 0);
        plans.ADVANCED!.storageLimitBytes = limit;
        const answers = await Promise.all(images.map((b) => inline(b, {}, c, own.projects[0]!.id)));
        const admitted = answers.filter((r) => r.status === 200);
        assert.ok(admitted.length >= 1 && admitted.length <= 4, JSON.stringify(answers.map((r) => r.status)));
        for (const r of answers.filter((r) => r.status !== 200))
          assert.equal(assertError(r, 402, 'usage_limit_exceeded').details?.meter, 'storage_bytes');
        assert.ok((await usedBytes()) <= limit, `${await usedBytes()} bytes stored over a limit of ${limit}`);
        // The kept counts (a trigger on media_assets) agree with the library after the races.
        const assets = await db()('media_assets').where({ workspace_id: own.workspace.id }).count<{ n: string }[]>('* as n');
        assert.deepEqual(await storageUsed(own.workspace.id), { usedBytes: await usedBytes(), usedAssets: Number(assets[0]!.n) });
      } finally {
        Object.assign(plans.ADVANCED!, saved);
      }
    });
  });

  describe('PATCH /v1/posts/{postId}/media (spec 4.4)', () => {
    async function draft(c = call, projectId = ws.projects[0]!.id) {
      const r = await c('POST', '/v1/posts', { body: { projectId, content: 'With a picture' } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data.id as string;
    }

    it('writes the full state in order, carries the asset alt, clears with an empty list, emits post.updated', async () => {
      const postId = await draft();
      const one = (await inline(png(20, 20), { alt: 'First alt', title: 'First' })).body.data;
      const two = (await inline(png(21, 20), { fileName: 'second.png' })).body.data;
      const res = await call('PATCH', `/v1/posts/${postId}/media`, {
        body: { images: [{ key: two.key, alt: 'Given alt' }, { key: one.key }] },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.data.media, {
        kind: 'images',
        images: [
          { key: two.key, alt: 'Given alt', name: 'second.png' },
          { key: one.key, alt: 'First alt', name: 'First' },
        ],
      });
      const read = await call('GET', `/v1/posts/${postId}`);
      assert.equal(read.status, 200);
      const events = await db()('outbox_events')
        .where({ workspace_id: ws.workspace.id, type: 'post.updated' })
        .andWhereRaw(`data->'post'->>'id' = ?`, [postId]);
      assert.equal(events.length, 1);
      assert.equal(events[0].data.post.media.images.length, 2);

      const cleared = await call('PATCH', `/v1/posts/${postId}/media`, { body: { images: [] } });
      assert.deepEqual(cleared.body.data.media, { kind: 'images', images: [] });
    });

    it('refuses unknown and foreign keys (404), duplicates and more than the network takes (422)', async () => {
      const postId = await draft();
      const other = await workspaceWithKey({ projects: 1 });
      const foreign = (await inline(png(7, 7), {}, client(api.url, other.key), other.projects[0]!.id)).body.data;
      const err = assertError(
        await call('PATCH', `/v1/posts/${postId}/media`, { body: { images: [{ key: foreign.key }] } }),
        404,
        'not_found',
      );
      assert.equal(err.details?.key, foreign.key);
      const mine = (await inline(png(7, 8))).body.data;
      assertError(
        await call('PATCH', `/v1/posts/${postId}/media`, { body: { images: [{ key: mine.key }, { key: mine.key }] } }),
        422,
        'unprocessable',
      );
      const tooMany = Array.from({ length: config.media.maxImagesPerPost + 1 }, (_, i) => ({ key: `k${i}` }));
      assert.equal(
        assertError(await call('PATCH', `/v1/posts/${postId}/media`, { body: { images: tooMany } }), 422, 'unprocessable').details?.limit,
        config.media.maxImagesPerPost,
      );
      assertError(
        await call('PATCH', `/v1/posts/${postId}/media`, { body: { images: [{ key: mine.key, extra: true }] } }),
        422,
        'unprocessable',
      );
      // A post of another workspace, or none, is not found, whatever the body.
      const stranger = await workspaceWithKey({ projects: 1 });
      const theirPost = await draft(client(api.url, stranger.key), stranger.projects[0]!.id);
      assertError(await call('PATCH', `/v1/posts/${theirPost}/media`, { body: { images: [] } }), 404, 'not_found');
      assertError(await call('PATCH', '/v1/posts/post_doesnotexist00000000000/media', { body: { images: [] } }), 404, 'not_found');
    });

    it('needs posts:write and media:read: one missing names it, both missing carry no details', async () => {
      const postId = await draft();
      const only = async (scopes: string[]) => {
        const w = await workspaceWithKey({ scopes });
        return assertError(
          await client(api.url, w.key)('PATCH', `/v1/posts/${postId}/media`, { body: { images: [] } }),
          403,
          'scope_missing',
        );
      };
      assert.deepEqual((await only(['posts:write'])).details, { required_scope: 'media:read' });
      assert.deepEqual((await only(['media:read'])).details, { required_scope: 'posts:write' });
      assert.equal((await only(['notes:read'])).details, undefined);
    });

    it('client-role accounts get forbidden_project / client_role on every media operation (spec 5.4)', async () => {
      const c = client(api.url, await oauthToken(api.url, ws.workspace.id, { role: 'Client', scope: 'read write' }));
      const image = png(3, 3);
      const calls: Array<[string, string, unknown?]> = [
        ['POST', '/v1/uploads', { fileName: 'a.png', contentType: 'image/png', bytes: 10, purpose: 'media' }],
        ['POST', '/v1/media', { content_base64: image.toString('base64') }],
        ['GET', '/v1/media'],
        ['GET', '/v1/media/med_x'],
        ['PATCH', '/v1/posts/post_x/media', { images: [] }],
      ];
      for (const [method, path, body] of calls) {
        const err = assertError(await c(method, path, { body }), 403, 'forbidden_project');
        assert.equal(err.details?.reason, 'client_role', `${method} ${path}`);
      }
    });
  });
});
