import assert from 'node:assert/strict';
import { freshSeconds } from '../../lib/outbound/freshness';

// RFC 9111 4.2.1 freshness as a shared cache reads it (lib/outbound/freshness.ts).

describe('freshSeconds (RFC 9111 4.2.1)', () => {
  const now = Date.parse('2026-11-29T12:00:00Z');
  const date = new Date(now).toUTCString();

  it('s-maxage over max-age over Expires', () => {
    assert.equal(freshSeconds({ 'cache-control': 'max-age=60, s-maxage=30' }, now), 30);
    assert.equal(freshSeconds({ 'cache-control': 'public, max-age=600', expires: new Date(now + 5_000).toUTCString(), date }, now), 600);
    assert.equal(freshSeconds({ expires: new Date(now + 90_000).toUTCString(), date }, now), 90);
  });

  it('no-store, no-cache and private are not reusable by a shared cache', () => {
    for (const cc of ['no-store', 'no-cache', 'private, max-age=600', 'max-age=600, no-store'])
      assert.equal(freshSeconds({ 'cache-control': cc }, now), 0, cc);
  });

  it('the age already spent counts (Age, or the apparent age from Date)', () => {
    assert.equal(freshSeconds({ 'cache-control': 'max-age=100', age: '40' }, now), 60);
    assert.equal(freshSeconds({ 'cache-control': 'max-age=100', date: new Date(now - 70_000).toUTCString() }, now), 30);
    assert.equal(freshSeconds({ 'cache-control': 'max-age=100', age: '500' }, now), 0);
  });

  it('no signal, an unreadable one or an invalid Expires: not fresh', () => {
    assert.equal(freshSeconds({}, now), 0);
    assert.equal(freshSeconds({ 'cache-control': 'max-age=soon' }, now), 0);
    assert.equal(freshSeconds({ expires: '0', date }, now), 0);
  });
});
