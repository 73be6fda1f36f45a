import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../../lib/media/assets';
import { objectStore } from '../../lib/storage/objectStore';

// The object store's PUT with a digest the caller already has (content-keyed objects): the
// digest is the signed payload hash, so the bytes are hashed once, and the store checks it.

describe('object store: a PUT with the caller’s SHA-256 (embedded store)', function () {
  this.timeout(30_000);

  it('stores the bytes under the digest it is given, as a PUT that hashes them itself does', async () => {
    const bytes = randomBytes(70_000);
    const digest = sha256Hex(bytes);
    await objectStore().put(`test/known-hash/${digest}`, bytes, 'application/octet-stream', digest);
    assert.deepEqual(await objectStore().get(`test/known-hash/${digest}`), bytes);
    await objectStore().put(`test/known-hash/plain-${digest}`, bytes, 'application/octet-stream');
    assert.deepEqual(await objectStore().get(`test/known-hash/plain-${digest}`), bytes);
  });

  it('a digest that is not the bytes’ own is refused by the store, and nothing is stored', async () => {
    const bytes = randomBytes(5_000);
    const key = `test/known-hash/wrong-${sha256Hex(bytes)}`;
    await assert.rejects(objectStore().put(key, bytes, 'application/octet-stream', sha256Hex(Buffer.from('other bytes'))));
    assert.equal(await objectStore().head(key), null);
  });
});
