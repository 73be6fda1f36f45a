// The real HTTP client against the real simulator server (ARCHITECTURE.md, Tests: no mock stands
// in for the network layer). Each case is one behaviour the publish path relies on: exactly-once
// creation through the reference (spec 3.1), refresh before publishing, and the failure verdicts
// that drive the connection state (spec 2.6, 3.4).

import assert from 'node:assert/strict';
import { config } from '../../lib/config';
import { HttpNetworkClient, createNetworkClient, POST_REFERENCE_HEADER, type Author } from '../../lib/network/client';
import { parseRetryAfter } from '../../lib/outbound/outbound';
import { NetworkError } from '../../lib/network/errors';
import { createSimulatorControl } from '../../sim/network/control';
import { REFERENCE_HEADER, startNetworkSimulator, type NetworkSimulator } from '../../sim/network/server';

const CLIENT_ID = 'test-client';
const CLIENT_SECRET = 'test-secret';
const API_VERSION = '202610';

function makeClient(sim: NetworkSimulator, timeoutMs = 5_000): HttpNetworkClient {
  return new HttpNetworkClient({ baseUrl: sim.url, apiVersion: API_VERSION, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, timeoutMs });
}

/** Asserts that `promise` rejects with a NetworkError matching `expected`, and returns it. */
async function rejectsWith(
  promise: Promise<unknown>,
  expected: Partial<Pick<NetworkError, 'kind' | 'code' | 'status' | 'retryable'>>,
): Promise<NetworkError> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof NetworkError, `expected a NetworkError, got ${caught === undefined ? 'success' : String(caught)}`);
  for (const [k, v] of Object.entries(expected)) {
    assert.equal((caught as unknown as Record<string, unknown>)[k], v, `${k} of ${caught.message}`);
  }
  return caught;
}

describe('network client against the network simulator', function () {
  this.timeout(20_000);

  let sim: NetworkSimulator;
  let client: HttpNetworkClient;
  const ada: Author = { type: 'person', id: 'ada' };
  const acme: Author = { type: 'organization', id: '1001' };

  before(async () => {
    sim = await startNetworkSimulator({ port: 0, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    client = makeClient(sim);
  });
  after(async () => {
    await sim?.close();
  });
  beforeEach(async () => {
    await sim.control.reset();
  });

  it('uses the same reference header name on both sides of the wire', () => {
    assert.equal(POST_REFERENCE_HEADER.toLowerCase(), REFERENCE_HEADER.toLowerCase());
  });

  describe('createPost', () => {
    it('creates a post as the person and the simulator records it', async () => {
      const { accessToken } = await sim.control.issueToken({ personId: 'ada' });
      const res = await client.createPost({ accessToken, author: ada, text: 'Hello network', reference: 'post_1:v1' });
      assert.equal(res.created, true);
      assert.match(res.postUrn, /^urn:li:share:\d+$/);

      const { total, posts } = await sim.control.listPosts({ author: 'urn:li:person:ada' });
      assert.equal(total, 1);
      assert.equal(posts[0]!.postUrn, res.postUrn);
      assert.equal(posts[0]!.text, 'Hello network');
      assert.equal(posts[0]!.reference, 'post_1:v1');
      assert.equal(posts[0]!.createdBy, 'ada');
      assert.equal(posts[0]!.createCalls, 1);
      assert.ok(!Number.isNaN(Date.parse(posts[0]!.receivedAt)));
    });

    it('keeps its connection alive: consecutive calls share one, as with a real network', async () => {
      const { accessToken } = await sim.control.issueToken({ personId: 'ada' });
      const before = await sim.control.counts();
      for (let i = 0; i < 5; i++) await client.createPost({ accessToken, author: ada, text: `Post ${i}`, reference: `post_ka:${i}` });
      const after = await sim.control.counts();
      assert.equal(after.calls.createPost - before.calls.createPost, 5);
      assert.ok(after.connections - before.connections <= 1, `${after.connections - before.connections} connections for 5 calls`);
    });

    it('refuses to post as another person (403, permanent) and records nothing', async () => {
      const { accessToken } = await sim.control.issueToken({ personId: 'ada' });
      await rejectsWith(client.createPost({ accessToken, author: { type: 'person', id: 'bob' }, text: 'x', reference: 'r' }), {
        kind: 'permanent',
        code: 'forbidden',
        status: 403,
        retryable: false,
      });
      assert.equal((await sim.control.counts()).posts, 0);
    });

    it('posts as an organization the person administers, and not as one it does not', async () => {
      const { accessToken: adaToken } = await sim.control.issueToken({ personId: 'ada' });
      const { accessToken: bobToken } = await sim.control.issueToken({ personId: 'bob' });
      await sim.control.setOrganizationAdmins('1001', ['ada']);

      const res = await client.createPost({ accessToken: adaToken, author: acme, text: 'Company news', reference: 'post_2:v1' });
      assert.equal(res.created, true);
      const post = await sim.control.getPost(res.postUrn);
      assert.equal(post?.author, 'urn:li:organization:1001');
      assert.equal(post?.authorType, 'organization');
      assert.equal(post?.createdBy, 'ada');

      await rejectsWith(client.createPost({ accessToken: bobToken, author: acme, text: 'Not mine', reference: 'post_3:v1' }), {
        kind: 'permanent',
        code: 'forbidden',
      });
      // Losing the admin role takes effect on the next call.
      await sim.control.setOrganizationAdmins('1001', []);
      await rejectsWith(client.createPost({ accessToken: adaToken, author: acme, text: 'Again', reference: 'post_4:v1' }), {
        kind: 'permanent',
        code: 'forbidden',
      });
      assert.equal((await sim.control.counts()).posts, 1);
    });

    it('a retry with the same reference returns the original post and records it once', async () => {
      const { accessToken } = await sim.control.issueToken({ personId: 'ada' });
      const first = await client.createPost({ accessToken, author: ada, text: 'Once only', reference: 'post_5:v1' });
      const second = await client.createPost({ accessToken, author: ada, text: 'Once only', reference: 'post_5:v1' });
      assert.deepEqual(second, { postUrn: first.postUrn, created: false });

      const { total, posts } = await sim.control.listPosts({ reference: 'post_5:v1' });
      assert.equal(total, 1);
      assert.equal(posts[0]!.createCalls, 2);
      const counts = await sim.control.counts();
      assert.equal(counts.posts, 1);
      assert.equal(counts.replays, 1);

      // A new reference is a new post.
      const third = await client.createPost({ accessToken, author: ada, text: 'Once only', reference: 'post_5:v2' });
      assert.equal(third.created, true);
      assert.notEqual(third.postUrn, first.postUrn);
    });

    it('a reference survives token refresh: the retry may use a newer access token', async () => {
      const issued = await sim.control.issueToken({ personId: 'ada' });
      const first = await client.createPost({ accessToken: issued.accessToken, author: ada, text: 'x', reference: 'post_6:v1' });
      const refreshed = await client.refreshAccessToken(issued.refreshToken!);
      const again = await client.createPost({ accessToken: refreshed.accessToken, author: ada, text: 'x', reference: 'post_6:v1' });
      assert.deepEqual(again, { postUrn: first.postUrn, created: false });
    });

    it('rejects text the network would refuse as permanent, before or at the network', async () => {
      const { accessToken } = await sim.control.issueToken({ personId: 'ada' });
      await rejectsWith(client.createPost({ accessToken, author: ada, text: '   ', reference: 'r' }), {
        kind: 'permanent',
        code: 'invalid_request',
        status: null,
      });
      await rejectsWith(client.createPost({ accessToken, author: ada, text: 'x'.repeat(3001), reference: 'r' }), {
        kind: 'permanent',
        code: 'unprocessable',
        status: 422,
      });
      await rejectsWith(client.createPost({ accessToken, author: ada, text: 'ok', reference: '' }), {
        kind: 'permanent',
        code: 'invalid_request',
      });
      assert.equal((await sim.control.counts()).posts, 0);
    });
  });

  describe('lost responses and findPostByReference', () => {
    it('the post exists although the connection died; findPostByReference finds it and the retry creates nothing', async () => {
      const { accessToken } = await sim.control.issueToken({ personId: 'ada' });
      await sim.control.addFault({ kind: 'lost_response', operation: 'createPost', lostAs: 'socket' });

      await rejectsWith(client.createPost({ accessToken, author: ada, text: 'Lost answer', reference: 'post_7:v1' }), {
        kind: 'transient',
        code: 'connection_error',
        status: null,
        retryable: true,
      });
      assert.equal((await sim.control.counts()).lostResponses, 1);

      const found = await client.findPostByReference(accessToken, ada, 'post_7:v1');
      assert.ok(found, 'the post was recorded before the response was lost');
      const recorded = await sim.control.listPosts({ author: 'urn:li:person:ada', reference: 'post_7:v1' });
      assert.equal(recorded.posts[0]!.postUrn, found.postUrn);

      const retry = await client.createPost({ accessToken, author: ada, text: 'Lost answer', reference: 'post_7:v1' });
      assert.deepEqual(retry, { postUrn: found.postUrn, created: false });
      assert.equal((await sim.control.counts()).posts, 1);
    });

    it('a 503 after the post was recorded is transient, and the post is there', async () => {
      const { accessToken } = await sim.control.issueToken({ personId: 'ada' });
      await sim.control.addFault({ kind: 'lost_response', lostAs: '503' });
      await rejectsWith(client.createPost({ accessToken, author: ada, text: 'Half', reference: 'post_8:v1' }), {
        kind: 'transient',
        code: 'unavailable',
        status: 503,
      });
      assert.ok(await client.findPostByReference(accessToken, ada, 'post_8:v1'));
      assert.equal((await sim.control.counts()).posts, 1);
    });

    it('returns null for a reference never used, and scopes references to the author', async () => {
      const { accessToken } = await sim.control.issueToken({ personId: 'ada' });
      await sim.control.setOrganizationAdmins('1001', ['ada']);
      assert.equal(await client.findPostByReference(accessToken, ada, 'nothing-here'), null);

      await client.createPost({ accessToken, author: ada, text: 'mine', reference: 'shared-ref' });
      assert.equal(await client.findPostByReference(accessToken, acme, 'shared-ref'), null);
      const org = await client.createPost({ accessToken, author: acme, text: 'company', reference: 'shared-ref' });
      assert.equal(org.created, true);
      assert.deepEqual(await client.findPostByReference(accessToken, acme, 'shared-ref'), { postUrn: org.postUrn });
    });

    it('a createPost that outlives the client timeout still publishes; the reference resolves it', async () => {
      const { accessToken } = await sim.control.issueToken({ personId: 'ada' });
      await sim.control.setLatency({ operation: 'createPost', ms: 400 });
      const impatient = makeClient(sim, 100);
      await rejectsWith(impatient.createPost({ accessToken, author: ada, text: 'slow', reference: 'post_9:v1' }), {
        kind: 'transient',
        code: 'timeout',
        status: null,
      });
      await sim.control.setLatency({ operation: 'createPost', ms: 0 });

      let found: { postUrn: string } | null = null;
      for (let i = 0; i < 40 && !found; i++) {
        found = await client.findPostByReference(accessToken, ada, 'post_9:v1');
        if (!found) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(found, 'the slow call was processed after the client gave up');
      const retry = await client.createPost({ accessToken, author: ada, text: 'slow', reference: 'post_9:v1' });
      assert.deepEqual(retry, { postUrn: found.postUrn, created: false });
    });
  });

  describe('tokens', () => {
    it('refresh issues a new working access token and keeps the refresh token', async () => {
      const issued = await sim.control.issueToken({ personId: 'ada', expiresInSeconds: 60 });
      const before = Date.now();
      const refreshed = await client.refreshAccessToken(issued.refreshToken!);
      assert.notEqual(refreshed.accessToken, issued.accessToken);
      assert.ok(refreshed.expiresAt.getTime() > before + 59 * 24 * 3600_000, 'a refreshed token lives for the network default (60 days)');
      assert.equal(refreshed.refreshToken, issued.refreshToken);
      assert.ok(refreshed.refreshTokenExpiresAt);
      assert.ok(Math.abs(refreshed.refreshTokenExpiresAt.getTime() - Date.parse(issued.refreshTokenExpiresAt!)) < 2_000);
      assert.equal((await client.getIdentity(refreshed.accessToken)).personId, 'ada');
      assert.equal((await sim.control.counts()).refreshes, 1);
    });

    it('refresh after revocation or refresh-token expiry is auth / refresh_token_invalid', async () => {
      const a = await sim.control.issueToken({ personId: 'ada' });
      await sim.control.revokeToken({ token: a.accessToken });
      await rejectsWith(client.refreshAccessToken(a.refreshToken!), {
        kind: 'auth',
        code: 'refresh_token_invalid',
        status: 400,
        retryable: false,
      });

      const b = await sim.control.issueToken({ personId: 'ada' });
      assert.deepEqual(await sim.control.expireToken({ token: b.refreshToken! }), { expired: ['refresh'] });
      await rejectsWith(client.refreshAccessToken(b.refreshToken!), { kind: 'auth', code: 'refresh_token_invalid' });

      await rejectsWith(client.refreshAccessToken('AQR-never-issued'), { kind: 'auth', code: 'refresh_token_invalid' });
    });

    it('wrong client credentials on refresh are permanent, not a user authorization problem', async () => {
      const a = await sim.control.issueToken({ personId: 'ada' });
      const misconfigured = new HttpNetworkClient({
        baseUrl: sim.url,
        apiVersion: API_VERSION,
        clientId: CLIENT_ID,
        clientSecret: 'wrong',
        timeoutMs: 5_000,
      });
      await rejectsWith(misconfigured.refreshAccessToken(a.refreshToken!), { kind: 'permanent', code: 'invalid_client', status: 401 });
    });

    it('revoked, expired and unknown access tokens are auth errors with distinct codes', async () => {
      const revoked = await sim.control.issueToken({ personId: 'ada' });
      assert.deepEqual(await sim.control.revokeToken({ token: revoked.refreshToken! }), { revokedGrants: 1 });
      const e1 = await rejectsWith(client.getIdentity(revoked.accessToken), {
        kind: 'auth',
        code: 'token_revoked',
        status: 401,
        retryable: false,
      });
      assert.equal(e1.serverCode, 'REVOKED_ACCESS_TOKEN');
      await rejectsWith(client.createPost({ accessToken: revoked.accessToken, author: ada, text: 'x', reference: 'r1' }), {
        kind: 'auth',
        code: 'token_revoked',
      });

      const expired = await sim.control.issueToken({ personId: 'ada' });
      await sim.control.expireToken({ token: expired.accessToken });
      await rejectsWith(client.createPost({ accessToken: expired.accessToken, author: ada, text: 'x', reference: 'r2' }), {
        kind: 'auth',
        code: 'token_expired',
      });
      // Expiring the access token alone leaves the refresh path open.
      const renewed = await client.refreshAccessToken(expired.refreshToken!);
      assert.equal((await client.getIdentity(renewed.accessToken)).personId, 'ada');

      const bornExpired = await sim.control.issueToken({ personId: 'ada', expiresInSeconds: 0 });
      await rejectsWith(client.listOrganizationAdmins(bornExpired.accessToken, '1001'), { kind: 'auth', code: 'token_expired' });

      await rejectsWith(client.getPostMetrics('AQV-never-issued', 'urn:li:share:1'), { kind: 'auth', code: 'invalid_token' });
      assert.equal((await sim.control.counts()).posts, 0);
    });

    it('revoking by person kills every grant of that person', async () => {
      const a = await sim.control.issueToken({ personId: 'ada' });
      const b = await sim.control.issueToken({ personId: 'ada' });
      const other = await sim.control.issueToken({ personId: 'bob' });
      assert.deepEqual(await sim.control.revokeToken({ personId: 'ada' }), { revokedGrants: 2 });
      await rejectsWith(client.getIdentity(a.accessToken), { code: 'token_revoked' });
      await rejectsWith(client.getIdentity(b.accessToken), { code: 'token_revoked' });
      assert.equal((await client.getIdentity(other.accessToken)).personId, 'bob');
    });

    it('getIdentity returns the profile given when the token was issued', async () => {
      const { accessToken } = await sim.control.issueToken({
        personId: 'ada',
        name: 'Ada Lovelace',
        vanityName: 'ada-lovelace',
        pictureUrl: 'https://media.example/ada.jpg',
      });
      assert.deepEqual(await client.getIdentity(accessToken), {
        personId: 'ada',
        name: 'Ada Lovelace',
        vanityName: 'ada-lovelace',
        pictureUrl: 'https://media.example/ada.jpg',
      });
      const plain = await sim.control.issueToken({ personId: 'bob' });
      assert.deepEqual(await client.getIdentity(plain.accessToken), {
        personId: 'bob',
        name: 'Person bob',
        vanityName: null,
        pictureUrl: null,
      });
    });
  });

  describe('faults', () => {
    it('transient faults fail the next N calls of one operation with kind transient, then the call succeeds', async () => {
      const { accessToken } = await sim.control.issueToken({ personId: 'ada' });
      await sim.control.addFault({ kind: 'transient', operation: 'createPost', times: 2 });
      // Another operation is not affected by a createPost fault.
      assert.equal((await client.getIdentity(accessToken)).personId, 'ada');
      for (let i = 0; i < 2; i++) {
        await rejectsWith(client.createPost({ accessToken, author: ada, text: 'x', reference: 'post_10:v1' }), {
          kind: 'transient',
          code: 'unavailable',
          status: 503,
          retryable: true,
        });
      }
      assert.equal((await sim.control.counts()).posts, 0, 'a fault answered before processing creates nothing');
      const ok = await client.createPost({ accessToken, author: ada, text: 'x', reference: 'post_10:v1' });
      assert.equal(ok.created, true);
      assert.deepEqual(await sim.control.listFaults(), []);
      const counts = await sim.control.counts();
      assert.equal(counts.faultsTriggered, 2);
      assert.equal(counts.calls.createPost, 3);
    });

    it("a fault scoped to an access token meets only that token's calls", async () => {
      const mine = (await sim.control.issueToken({ personId: 'ada' })).accessToken;
      const other = (await sim.control.issueToken({ personId: 'ada' })).accessToken;
      await sim.control.addFault({ kind: 'permanent', operation: 'createPost', status: 422, accessToken: mine });
      // Another token's call passes and leaves the fault in place.
      assert.equal((await client.createPost({ accessToken: other, author: ada, text: 'x', reference: 'post_11:v1' })).created, true);
      assert.equal((await sim.control.listFaults()).length, 1);
      await rejectsWith(client.createPost({ accessToken: mine, author: ada, text: 'x', reference: 'post_12:v1' }), {
        kind: 'permanent',
        status: 422,
      });
      assert.deepEqual(await sim.control.listFaults(), []);
    });

    it('429 carries Retry-After through to the error', async () => {
      const { accessToken } = await sim.control.issueToken({ personId: 'ada' });
      await sim.control.addFault({ kind: 'transient', status: 429, retryAfterSeconds: 7, operation: 'metrics' });
      const err = await rejectsWith(client.getPostMetrics(accessToken, 'urn:li:share:1'), {
        kind: 'transient',
        code: 'rate_limited',
        status: 429,
      });
      assert.equal(err.retryAfterMs, 7_000);
      assert.ok(
        (parseRetryAfter(new Headers({ 'retry-after': new Date(Date.now() + 10_000).toUTCString() })) ?? 0) > 8_000,
        'an HTTP-date Retry-After counts too',
      );
    });

    it('faults on refresh use the OAuth error shape and still classify as transient / permanent', async () => {
      const a = await sim.control.issueToken({ personId: 'ada' });
      await sim.control.addFault({ kind: 'transient', operation: 'refresh', status: 500 });
      await rejectsWith(client.refreshAccessToken(a.refreshToken!), { kind: 'transient', code: 'server_error', status: 500 });
      await sim.control.addFault({ kind: 'permanent', operation: 'refresh' });
      await rejectsWith(client.refreshAccessToken(a.refreshToken!), { kind: 'permanent', code: 'invalid_request', status: 400 });
      assert.ok((await client.refreshAccessToken(a.refreshToken!)).accessToken);
    });

    it('permanent faults (400, 403) are permanent and not retryable', async () => {
      const { accessToken } = await sim.control.issueToken({ personId: 'ada' });
      await sim.control.addFault({ kind: 'permanent', operation: 'createPost', status: 400 });
      await sim.control.addFault({ kind: 'permanent', operation: 'any', status: 403 });
      await rejectsWith(client.createPost({ accessToken, author: ada, text: 'x', reference: 'r' }), {
        kind: 'permanent',
        code: 'invalid_request',
        status: 400,
        retryable: false,
      });
      await rejectsWith(client.getIdentity(accessToken), { kind: 'permanent', code: 'forbidden', status: 403, retryable: false });
      assert.equal((await client.getIdentity(accessToken)).personId, 'ada');
    });

    it('latency on one operation trips the client timeout there only', async () => {
      const { accessToken } = await sim.control.issueToken({ personId: 'ada' });
      await sim.control.setLatency({ operation: 'identity', ms: 1_000 });
      assert.deepEqual(await sim.control.getLatency(), { identity: 1_000 });
      const impatient = makeClient(sim, 150);
      const started = Date.now();
      await rejectsWith(impatient.getIdentity(accessToken), { kind: 'transient', code: 'timeout', status: null, retryable: true });
      assert.ok(Date.now() - started < 900, 'the client gave up at its own timeout, not the server latency');
      assert.deepEqual(await impatient.listOrganizationAdmins(accessToken, '1001'), []);
      // The patient client waits the latency out.
      assert.equal((await client.getIdentity(accessToken)).personId, 'ada');
    });

    it('a connection refused is transient', async () => {
      const dead = await startNetworkSimulator({ port: 0 });
      const url = dead.url;
      await dead.close();
      const orphan = new HttpNetworkClient({
        baseUrl: url,
        apiVersion: API_VERSION,
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        timeoutMs: 2_000,
      });
      await rejectsWith(orphan.getIdentity('AQV-anything'), { kind: 'transient', code: 'connection_error', status: null });
    });
  });

  describe('organization admins', () => {
    it('lists admins, including an empty set and a replaced set', async () => {
      const { accessToken } = await sim.control.issueToken({ personId: 'ada' });
      assert.deepEqual(await client.listOrganizationAdmins(accessToken, '1001'), []);
      await sim.control.setOrganizationAdmins('1001', ['ada', 'bob']);
      assert.deepEqual(await client.listOrganizationAdmins(accessToken, '1001'), ['ada', 'bob']);
      await sim.control.setOrganizationAdmins('1001', ['carol']);
      assert.deepEqual(await client.listOrganizationAdmins(accessToken, '1001'), ['carol']);
      await sim.control.setOrganizationAdmins('1001', []);
      assert.deepEqual(await client.listOrganizationAdmins(accessToken, '1001'), []);
      assert.deepEqual(await sim.control.getOrganizationAdmins('1001'), { organizationId: '1001', personIds: [] });
    });

    it('pages through large admin sets', async () => {
      const { accessToken } = await sim.control.issueToken({ personId: 'ada' });
      const ids = Array.from({ length: 250 }, (_, i) => `p${i}`);
      await sim.control.setOrganizationAdmins('2002', ids);
      assert.deepEqual(await client.listOrganizationAdmins(accessToken, '2002'), ids);
      assert.equal((await sim.control.counts()).calls.admins, 3);
    });
  });

  describe('metrics', () => {
    it('reads the metrics the simulator holds for a post', async () => {
      const { accessToken } = await sim.control.issueToken({ personId: 'ada' });
      const { postUrn } = await client.createPost({ accessToken, author: ada, text: 'measured', reference: 'post_11:v1' });
      assert.deepEqual(await client.getPostMetrics(accessToken, postUrn), { impressions: 0, likes: 0, comments: 0, reshares: 0 });
      await sim.control.setPostMetrics(postUrn, { impressions: 1200, likes: 34, comments: 5, reshares: 2 });
      assert.deepEqual(await client.getPostMetrics(accessToken, postUrn), { impressions: 1200, likes: 34, comments: 5, reshares: 2 });
      await rejectsWith(client.getPostMetrics(accessToken, 'urn:li:share:42'), { kind: 'permanent', code: 'not_found', status: 404 });
    });
  });

  describe('protocol details', () => {
    it('refuses /rest calls without LinkedIn-Version', async () => {
      const { accessToken } = await sim.control.issueToken({ personId: 'ada' });
      const res = await fetch(
        `${sim.url}/rest/organizationAcls?q=organization&organization=${encodeURIComponent('urn:li:organization:1')}`,
        {
          headers: { authorization: `Bearer ${accessToken}` },
        },
      );
      assert.equal(res.status, 400);
      assert.equal(((await res.json()) as { code: string }).code, 'VERSION_MISSING');
    });

    it('introspects tokens', async () => {
      const a = await sim.control.issueToken({ personId: 'ada' });
      const introspect = async (token: string) => {
        const res = await fetch(`${sim.url}/oauth/v2/introspectToken`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token, client_id: CLIENT_ID, client_secret: CLIENT_SECRET }),
        });
        assert.equal(res.status, 200);
        return (await res.json()) as { active: boolean; status?: string };
      };
      assert.deepEqual([(await introspect(a.accessToken)).active, (await introspect(a.accessToken)).status], [true, 'active']);
      await sim.control.revokeToken({ token: a.accessToken });
      assert.equal((await introspect(a.accessToken)).status, 'revoked');
      assert.equal((await introspect('unknown')).active, false);
    });

    it('createNetworkClient calls NETWORK_API_URL, else the local simulator on NETWORK_SIMULATOR_PORT', async () => {
      // issue 29 item 6: one address function (serviceAddresses) for npm start, its children and bin/admin.
      const saved = { apiUrl: config.network.apiUrl, simulatorPort: config.network.simulatorPort };
      try {
        const a = await sim.control.issueToken({ personId: 'ada' });
        config.network.apiUrl = undefined;
        config.network.simulatorPort = Number(new URL(sim.url).port);
        assert.equal((await createNetworkClient().getIdentity(a.accessToken)).personId, 'ada', 'derived from the port');
        config.network.apiUrl = sim.url;
        config.network.simulatorPort = 1;
        assert.equal((await createNetworkClient().getIdentity(a.accessToken)).personId, 'ada', 'the address wins over the port');
      } finally {
        Object.assign(config.network, saved);
      }
    });
  });

  describe('control API over HTTP', () => {
    it('mirrors the in-process control', async () => {
      const remote = createSimulatorControl(sim.url);
      assert.deepEqual(await remote.health(), { ok: true });
      const issued = await remote.issueToken({ personId: 'ada', name: 'Ada Lovelace' });
      await remote.setOrganizationAdmins('1001', ['ada']);
      const { postUrn } = await client.createPost({
        accessToken: issued.accessToken,
        author: acme,
        text: 'via HTTP',
        reference: 'post_12:v1',
      });
      const viaHttp = await remote.listPosts({ author: 'urn:li:organization:1001' });
      const inProcess = await sim.control.listPosts({ author: 'urn:li:organization:1001' });
      assert.deepEqual(viaHttp, inProcess);
      assert.equal((await remote.getPost(postUrn))?.text, 'via HTTP');
      assert.equal(await remote.getPost('urn:li:share:1'), null);
      const fault = await remote.addFault({ kind: 'transient', operation: 'metrics', times: 3 });
      assert.deepEqual(await remote.listFaults(), [fault]);
      await remote.clearFaults();
      assert.deepEqual(await sim.control.listFaults(), []);
      assert.deepEqual(await remote.counts(), await sim.control.counts());
      await assert.rejects(remote.addFault({ kind: 'transient', status: 418 as 503 }), { name: 'SimulatorControlError', status: 400 });
      await assert.rejects(remote.expireToken({ token: 'nope' }), { name: 'SimulatorControlError', status: 404 });
      const seeded = await remote.seedPosts({ author: 'urn:li:person:zed', count: 3, referencePrefix: 'z_' });
      assert.equal(seeded.created, 3);
      assert.equal((await sim.control.getPost(seeded.lastPostUrn))?.reference, 'z_2');
      await remote.reset();
      assert.equal((await sim.control.counts()).posts, 0);
    });
  });

  describe('scale', () => {
    it('stays fast with 20,000 recorded posts', async () => {
      const { accessToken } = await sim.control.issueToken({ personId: 'ada' });
      await sim.control.setOrganizationAdmins('1001', ['ada']);
      // Seeding bypasses HTTP so the test measures request cost at size, not the cost of filling.
      const seeded = await sim.control.seedPosts({ author: 'urn:li:person:ada', count: 10_000, referencePrefix: 'bulk_' });
      await sim.control.seedPosts({ author: 'urn:li:organization:1001', count: 10_000, referencePrefix: 'bulk_' });
      assert.equal(seeded.created, 10_000);
      assert.equal((await sim.control.counts()).posts, 20_000);

      const started = performance.now();
      for (let i = 0; i < 150; i++) {
        const ref = `bulk_${(i * 67) % 10_000}`;
        assert.ok(await client.findPostByReference(accessToken, ada, ref));
        assert.equal((await client.createPost({ accessToken, author: acme, text: 'again', reference: ref })).created, false);
        assert.equal((await client.createPost({ accessToken, author: ada, text: 'new', reference: `fresh_${i}` })).created, true);
      }
      const perCallMs = (performance.now() - started) / 450;
      // A generous bound, so a busy machine's scheduler cannot fail it: it catches a lookup gone
      // badly wrong at 20,000 posts, not a slow one (the simulator's speed is no target here).
      assert.ok(perCallMs < 100, `per-call cost does not grow with the post count (${perCallMs.toFixed(2)} ms per call)`);
      assert.equal((await sim.control.listPosts({ reference: 'bulk_9999' })).total, 2);
      assert.equal((await sim.control.listPosts({ author: 'urn:li:person:ada', reference: 'bulk_67' })).posts[0]!.createCalls, 0);
      assert.equal((await sim.control.listPosts({ author: 'urn:li:organization:1001', reference: 'bulk_67' })).posts[0]!.createCalls, 1);
      assert.equal((await sim.control.counts()).posts, 20_150);
      await assert.rejects(sim.control.seedPosts({ author: 'urn:li:person:ada', count: 1, referencePrefix: 'fresh_' }), { status: 400 });
    });
  });
});
