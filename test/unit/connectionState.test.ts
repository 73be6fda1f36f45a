import assert from 'node:assert/strict';
import { config } from '../../lib/config';
import { canPublish, deriveState, networkBlock, reconnectUrl, type StoredConnection } from '../../lib/connectionState';

// spec 2.6: the connection block derived from stored health. Token presence is decided first;
// canPublish, detail and reconnectUrl all follow the single derived state.

const NOW = new Date('2026-06-01T12:00:00.000Z');
const DAY = 86_400_000;
const healthy = (over: Partial<StoredConnection> = {}): StoredConnection => ({
  access_token_enc: 'v1.sealed',
  access_token_expires_at: new Date(NOW.getTime() + 60 * DAY),
  connection_status: 'CONNECTED',
  last_validated_at: new Date(NOW.getTime() - 3600_000),
  consecutive_failures: 0,
  revoked_at: null,
  ...over,
});

describe('lib/connectionState', () => {
  describe('deriveState', () => {
    it('is connected with a token, a far expiry and nothing wrong', () => {
      assert.equal(deriveState(healthy(), NOW), 'connected');
      assert.equal(deriveState(healthy({ access_token_expires_at: null }), NOW), 'connected', 'a token without known expiry');
    });

    it('is expiring_soon within 14 days of the token lapsing, and after it lapsed', () => {
      const days = config.network.expiringSoonDays;
      assert.equal(days, 14);
      assert.equal(deriveState(healthy({ access_token_expires_at: new Date(NOW.getTime() + 5 * DAY) }), NOW), 'expiring_soon');
      assert.equal(
        deriveState(healthy({ access_token_expires_at: new Date(NOW.getTime() + 14 * DAY) }), NOW),
        'expiring_soon',
        'the boundary is inside',
      );
      assert.equal(deriveState(healthy({ access_token_expires_at: new Date(NOW.getTime() + 14 * DAY + 1000) }), NOW), 'connected');
      assert.equal(
        deriveState(healthy({ access_token_expires_at: new Date(NOW.getTime() - DAY) }), NOW),
        'expiring_soon',
        'lapsed, not renewed',
      );
    });

    it('is degraded after recent failures or when the cache says so', () => {
      assert.equal(deriveState(healthy({ consecutive_failures: 1 }), NOW), 'degraded');
      assert.equal(deriveState(healthy({ connection_status: 'DEGRADED' }), NOW), 'degraded');
      // One state holds: degraded wins over an approaching expiry.
      assert.equal(
        deriveState(healthy({ consecutive_failures: 2, access_token_expires_at: new Date(NOW.getTime() + DAY) }), NOW),
        'degraded',
      );
    });

    it('is revoked when authorization was withdrawn', () => {
      assert.equal(deriveState(healthy({ connection_status: 'REVOKED' }), NOW), 'revoked');
      assert.equal(deriveState(healthy({ revoked_at: new Date(NOW.getTime() - DAY) }), NOW), 'revoked', 'the timestamp alone is enough');
      assert.equal(deriveState(healthy({ connection_status: 'REVOKED', consecutive_failures: 3 }), NOW), 'revoked');
    });

    it('is disconnected when the cache says so while a token is on file', () => {
      assert.equal(deriveState(healthy({ connection_status: 'DISCONNECTED' }), NOW), 'disconnected');
    });

    it('decides on token presence first, whatever the raw status says', () => {
      for (const status of ['CONNECTED', 'DEGRADED', 'REVOKED', 'UNKNOWN', 'DISCONNECTED']) {
        assert.equal(deriveState(healthy({ access_token_enc: null, connection_status: status }), NOW), 'disconnected', status);
      }
      assert.equal(deriveState(healthy({ access_token_enc: null, revoked_at: NOW, consecutive_failures: 5 }), NOW), 'disconnected');
      assert.equal(deriveState(healthy({ access_token_enc: '' }), NOW), 'disconnected', 'an empty token is no token');
    });
  });

  it('lets connected, expiring_soon and degraded publish, and not disconnected or revoked', () => {
    assert.equal(canPublish('connected'), true);
    assert.equal(canPublish('expiring_soon'), true);
    assert.equal(canPublish('degraded'), true);
    assert.equal(canPublish('disconnected'), false);
    assert.equal(canPublish('revoked'), false);
  });

  describe('networkBlock', () => {
    const ids = { workspaceId: 'org_w', projectId: 'proj_p' };

    it('has no detail exactly when connected, and no reconnectUrl when connected', () => {
      const ok = networkBlock(healthy(), ids, NOW);
      assert.deepEqual(ok, {
        state: 'connected',
        canPublish: true,
        connectionStatus: 'CONNECTED',
        lastValidatedAt: new Date(NOW.getTime() - 3600_000).toISOString(),
        accessTokenExpiresAt: new Date(NOW.getTime() + 60 * DAY).toISOString(),
        detail: null,
        reconnectUrl: null,
      });
      const variants: StoredConnection[] = [
        healthy({ access_token_expires_at: new Date(NOW.getTime() + DAY) }),
        healthy({ consecutive_failures: 1 }),
        healthy({ access_token_enc: null }),
        healthy({ connection_status: 'REVOKED' }),
      ];
      for (const v of variants) {
        const b = networkBlock(v, ids, NOW);
        assert.notEqual(b.state, 'connected');
        assert.equal(typeof b.detail, 'string');
        assert.equal(b.reconnectUrl, reconnectUrl(ids.workspaceId, ids.projectId));
        assert.equal(b.canPublish, canPublish(b.state));
      }
    });

    it('reports the raw status even where it disagrees with the state', () => {
      const b = networkBlock(healthy({ access_token_enc: null, last_validated_at: null, access_token_expires_at: null }), ids, NOW);
      assert.equal(b.state, 'disconnected');
      assert.equal(b.connectionStatus, 'CONNECTED');
      assert.equal(b.lastValidatedAt, null);
      assert.equal(b.accessTokenExpiresAt, null);
    });

    it('names a transient outage: degraded, can publish, nothing to reconnect (streak at 0)', () => {
      const at = new Date(NOW.getTime() - 60_000);
      const b = networkBlock(healthy({ connection_status: 'DEGRADED', last_error: 'timeout', last_failure_at: at }), ids, NOW);
      assert.equal(b.state, 'degraded');
      assert.equal(b.canPublish, true);
      assert.match(b.detail!, /did not answer in time/);
      assert.ok(b.detail!.includes(at.toISOString()));
      assert.equal(b.reconnectUrl, null);
      const refused = networkBlock(
        healthy({ connection_status: 'DEGRADED', consecutive_failures: 1, last_error: 'timeout', last_failure_at: at }),
        ids,
        NOW,
      );
      assert.doesNotMatch(refused.detail!, /did not answer/, 'a counted refusal is not an outage');
      assert.equal(refused.reconnectUrl, reconnectUrl(ids.workspaceId, ids.projectId));
    });

    it('points reconnectUrl at the dashboard page of the project', () => {
      assert.equal(reconnectUrl('org_a', 'proj_b'), `${config.dashboardUrl}/workspaces/org_a/projects/proj_b/connection`);
    });
  });
});
