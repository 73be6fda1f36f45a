import assert from 'node:assert/strict';
import { NetworkError, type NetworkErrorCode, type NetworkErrorKind } from '../../lib/network/errors';
import { EmptyAdminSet, streakEffect, type CallKind } from '../../lib/publishing/probe';
import { TokenUnavailable } from '../../lib/publishing/tokens';

// spec 2.6 / 3.4 and docs/publishing.md "The failure streak": the one rule every door applies
// to a network call made for a connection. One case per clause of the rule.

const netErr = (kind: NetworkErrorKind, code: NetworkErrorCode) => new NetworkError({ kind, code, status: null, message: code });
const KINDS: CallKind[] = ['refresh', 'probe', 'publish', 'read'];

describe('lib/publishing/probe streakEffect (the failure-streak rule)', () => {
  it('1. a success resets the streak, whatever the call', () => {
    for (const k of KINDS) assert.deepEqual(streakEffect(k, 'ok'), { effect: 'reset' });
  });

  it('2. a refused credential counts one failure on a probe, a publish and a read', () => {
    for (const code of ['token_revoked', 'token_expired', 'invalid_token'] as const) {
      assert.deepEqual(streakEffect('probe', netErr('auth', code)), { effect: 'count', error: code });
      assert.deepEqual(streakEffect('publish', netErr('auth', code)), { effect: 'count', error: code });
      assert.deepEqual(streakEffect('read', netErr('auth', code)), { effect: 'count', error: code });
    }
  });

  it('2. a probe the network refuses permanently counts, and so does an empty admin set', () => {
    assert.deepEqual(streakEffect('probe', netErr('permanent', 'forbidden')), { effect: 'count', error: 'forbidden' });
    assert.deepEqual(streakEffect('probe', new EmptyAdminSet()), { effect: 'count', error: 'no_admins' });
  });

  it('3. a token refresh the network refuses permanently revokes at once', () => {
    const refused = new TokenUnavailable('refresh_failed', 'The network refused to refresh the access token (refresh_token_invalid).');
    assert.deepEqual(streakEffect('refresh', refused), { effect: 'revoke', error: refused.message });
    assert.deepEqual(streakEffect('refresh', netErr('auth', 'refresh_token_invalid')), {
      effect: 'revoke',
      error: 'refresh_token_invalid',
    });
  });

  it('4. transient failures — timeouts included — neither count nor reset, but show the outage', () => {
    for (const code of ['timeout', 'connection_error', 'rate_limited', 'unavailable', 'server_error', 'invalid_response'] as const) {
      for (const k of KINDS)
        assert.deepEqual(streakEffect(k, netErr('transient', code)), { effect: 'outage', error: code }, `${k} ${code}`);
    }
  });

  it('5. the network refusing the post itself does not count', () => {
    for (const code of ['unprocessable', 'invalid_request', 'conflict', 'forbidden'] as const) {
      assert.deepEqual(streakEffect('publish', netErr('permanent', code)), { effect: 'none' }, code);
    }
  });

  it('5. a read refused for what it asked (a post gone or hidden) does not count', () => {
    for (const code of ['not_found', 'forbidden', 'invalid_request'] as const) {
      assert.deepEqual(streakEffect('read', netErr('permanent', code)), { effect: 'none' }, code);
    }
  });

  it('6. no call made (no token, stored revoked, lapsed without a refresh token) does not count', () => {
    for (const reason of ['no_token', 'revoked', 'expired'] as const) {
      assert.deepEqual(streakEffect('refresh', new TokenUnavailable(reason, reason)), { effect: 'none' });
    }
  });

  it("anything that is not a network outcome is not the connection's", () => {
    assert.deepEqual(streakEffect('probe', new Error('database down')), { effect: 'none' });
  });
});
