import assert from 'node:assert/strict';
import { newId, randomBase62, randomHex } from '../../lib/ids';

// lib/ids.ts draws its random bytes from a pool refilled from the CSPRNG: each byte is handed out
// once, so values stay distinct across refills, and any length is served.

describe('lib/ids random values', () => {
  it('ids keep their shape and never repeat across many pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const id = newId('request');
      assert.match(id, /^req_[0-9A-Za-z]{24}$/);
      seen.add(id);
    }
    assert.equal(seen.size, 5000);
  });

  it('serves hex of any size up to the pool and base62 of any length', () => {
    assert.match(randomHex(8), /^[0-9a-f]{16}$/);
    assert.notEqual(randomHex(8), randomHex(8));
    assert.match(randomBase62(5000), /^[0-9A-Za-z]{5000}$/);
    assert.throws(() => randomHex(5000), RangeError);
  });
});
