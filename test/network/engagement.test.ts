// likePost / commentOnPost of the real HTTP client against a real simulator server
// (docs/engagement.md): one like per actor and post, a comment reference answered with the first
// comment, and the network's refusals as NetworkError verdicts.

import assert from 'node:assert/strict';
import { HttpNetworkClient } from '../../lib/network/client';
import { NetworkError } from '../../lib/network/errors';
import { startNetworkSimulator, type NetworkSimulator } from '../../sim/network/server';

describe('network client: engagement calls against the simulator', function () {
  this.timeout(20_000);
  let sim: NetworkSimulator;
  let client: HttpNetworkClient;
  before(async () => {
    sim = await startNetworkSimulator({ clientId: 'c', clientSecret: 's' });
    client = new HttpNetworkClient({ baseUrl: sim.url, apiVersion: '202610', clientId: 'c', clientSecret: 's', timeoutMs: 5_000 });
  });
  after(async () => {
    await sim.close();
  });

  async function livePost() {
    const author = await sim.control.issueToken({ personId: 'author1' });
    const { postUrn } = await client.createPost({
      accessToken: author.accessToken,
      author: { type: 'person', id: 'author1' },
      text: 'Live',
      reference: `ref-${Date.now()}`,
    });
    const amp = await sim.control.issueToken({ personId: `amp${Math.floor(Math.random() * 1e9)}` });
    return { postUrn, amp, actor: { type: 'person' as const, id: amp.personId } };
  }

  it('likes once per actor: a repeat answers the existing reaction', async () => {
    const { postUrn, amp, actor } = await livePost();
    const first = await client.likePost({ accessToken: amp.accessToken, actor, postUrn, reference: 'r1' });
    const again = await client.likePost({ accessToken: amp.accessToken, actor, postUrn, reference: 'r1' });
    assert.deepEqual([first.created, again.created], [true, false]);
    const seen = await sim.control.listEngagement(postUrn);
    assert.equal(seen.likes.length, 1);
    assert.equal(seen.likes[0]!.calls, 2);
    assert.equal((await sim.control.counts()).calls.like, 2);
  });

  it('comments once per reference; a new reference is a new comment', async () => {
    const { postUrn, amp, actor } = await livePost();
    const a = await client.commentOnPost({ accessToken: amp.accessToken, actor, postUrn, reference: 'c1', text: 'Well said.' });
    const replay = await client.commentOnPost({ accessToken: amp.accessToken, actor, postUrn, reference: 'c1', text: 'Different text' });
    assert.equal(replay.commentUrn, a.commentUrn);
    assert.deepEqual([a.created, replay.created], [true, false]);
    await client.commentOnPost({ accessToken: amp.accessToken, actor, postUrn, reference: 'c2', text: 'Worth a read.' });
    const seen = await sim.control.listEngagement(postUrn);
    assert.deepEqual(
      seen.comments.map((c) => c.text),
      ['Well said.', 'Worth a read.'],
    );
  });

  it('refuses acting as someone else (403 permanent), an unknown post (404) and a revoked token (auth)', async () => {
    const { postUrn, amp } = await livePost();
    const refused = async (p: Promise<unknown>) => {
      try {
        await p;
      } catch (err) {
        assert.ok(err instanceof NetworkError);
        return err;
      }
      assert.fail('expected a refusal');
    };
    assert.equal(
      (
        await refused(
          client.likePost({ accessToken: amp.accessToken, actor: { type: 'person', id: 'someoneelse' }, postUrn, reference: 'x' }),
        )
      ).code,
      'forbidden',
    );
    assert.equal(
      (
        await refused(
          client.likePost({
            accessToken: amp.accessToken,
            actor: { type: 'person', id: amp.personId },
            postUrn: 'urn:li:share:1',
            reference: 'x',
          }),
        )
      ).code,
      'not_found',
    );
    await sim.control.revokeToken({ token: amp.accessToken });
    assert.equal(
      (
        await refused(
          client.commentOnPost({
            accessToken: amp.accessToken,
            actor: { type: 'person', id: amp.personId },
            postUrn,
            reference: 'x',
            text: 'hi',
          }),
        )
      ).kind,
      'auth',
    );
  });
});
