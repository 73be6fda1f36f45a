import assert from 'node:assert/strict';
import { hkdfSync } from 'node:crypto';
import { SignJWT } from 'jose';
import { config } from '../../lib/config';
import { mintCursor, mintDeleteConfirmation, readCursor, readDeleteConfirmation } from '../../lib/tokens';

// lib/tokens.ts: the service's signed tokens (JWS, HS256, a key and `typ` per purpose).

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const confirmation = { postId: 'post_a', workspaceId: 'ws_a', principalId: 'key_a', status: 'draft', scheduleVersion: 3 };

describe('lib/tokens', () => {
  it('a cursor reads back only under the filters it was minted under', async () => {
    const pos = { createdAt: '2026-01-01T00:00:00.000Z', id: 'post_a' };
    const cursor = mintCursor(pos, { projectId: 'p', status: ['draft'] });
    assert.deepEqual(await readCursor(cursor, { status: ['draft'], projectId: 'p', dateTo: null }), pos);
    assert.equal(await readCursor(cursor, { projectId: 'p' }), null);
    assert.equal(await readCursor(cursor, { projectId: 'p', status: ['scheduled'] }), null);
  });

  it('a cursor is the very JWS jose signs for the same header and claims (minted without WebCrypto)', async () => {
    const cursor = mintCursor({ createdAt: '2026-01-01T00:00:00.000Z', id: 'post_é🙂' }, { projectId: 'p' });
    const claims = JSON.parse(Buffer.from(cursor.split('.')[1]!, 'base64url').toString('utf8'));
    const key = new Uint8Array(hkdfSync('sha256', config.secretKey, 'content-scheduler signed tokens', 'cursor', 32));
    assert.equal(cursor, await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'cursor' }).sign(key));
    assert.equal(claims.i, 'post_é🙂');
  });

  it('refuses unsigned tokens, altered payloads and tokens of another purpose', async () => {
    const cursor = mintCursor({ createdAt: '2026-01-01T00:00:00.000Z', id: 'post_a' }, {});
    const [header, body, mac] = cursor.split('.');
    assert.equal(await readCursor(`${b64({ alg: 'none', typ: 'cursor' })}.${body}.`, {}), null);
    assert.equal(
      await readCursor(
        `${header}.${b64({ c: '2026-01-01T00:00:00.000Z', i: 'post_b', f: JSON.parse(Buffer.from(body!, 'base64url').toString()).f })}.${mac}`,
        {},
      ),
      null,
    );

    const { token } = await mintDeleteConfirmation(confirmation, 60_000);
    assert.equal(await readCursor(token.slice('pdc1.'.length), {}), null, 'a confirmation is not a cursor');
    assert.equal(await readDeleteConfirmation(`pdc1.${cursor}`), null, 'a cursor is not a confirmation');
    assert.equal(await readDeleteConfirmation(token.slice('pdc1.'.length)), null, 'the prefix is part of the token');
  });

  it('a delete confirmation carries its claims and an expiry on a whole second', async () => {
    const before = Date.now();
    const { token, expiresAt } = await mintDeleteConfirmation(confirmation, 300_000);
    assert.match(token, /^pdc1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    assert.equal(expiresAt.getTime() % 1000, 0);
    assert.ok(expiresAt.getTime() > before + 298_000 && expiresAt.getTime() <= before + 300_000);
    assert.deepEqual(await readDeleteConfirmation(token), { ...confirmation, expiresAt: expiresAt.getTime() });
  });

  it('an expired confirmation still reads back (the caller answers confirmation_expired)', async () => {
    const { token } = await mintDeleteConfirmation(confirmation, -5_000);
    const claims = await readDeleteConfirmation(token);
    assert.ok(claims);
    assert.equal(claims.postId, 'post_a');
    assert.ok(claims.expiresAt < Date.now());
  });
});
