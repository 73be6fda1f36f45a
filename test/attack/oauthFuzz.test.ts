import assert from 'node:assert/strict';
import fc from 'fast-check';
import { config } from '../../lib/config';
import { Browser, pkce, register, startOAuthApi } from '../oauth/support';
import { FUZZ_RUNS, FUZZ_SEED } from './fuzzing';

// The OAuth endpoints under junk (RFC 6749 5.2, RFC 7591 3.2.2, RFC 7009, RFC 7662): form and
// JSON bodies of random and hostile fields, every grant type, wrong content types, and random
// query strings at /oauth/authorize and the interaction pages. Never a 5xx; the JSON endpoints
// answer a JSON error, the browser endpoints an HTML page or a redirect.

const FIELDS = [
  'grant_type',
  'code',
  'redirect_uri',
  'client_id',
  'code_verifier',
  'refresh_token',
  'scope',
  'resource',
  'token',
  'token_type_hint',
  'client_secret',
  'state',
  'response_type',
  'code_challenge',
  'code_challenge_method',
  'redirect_uris',
  'client_name',
  'grant_types',
  'token_endpoint_auth_method',
  'software_id',
];
const hostile = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    '',
    '\u0000',
    '\uD800',
    'authorization_code',
    'refresh_token',
    'client_credentials',
    'password',
    'S256',
    'plain',
    'svc_ort_' + 'a'.repeat(43),
    'svc_oat_x',
    'x'.repeat(70_000),
    'https://evil.example.com/cb',
    'read write offline_access posts:publish',
  ),
  fc.string({ unit: 'binary', maxLength: 30 }),
);
const jsonHostile = fc.oneof(
  hostile,
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(null, [], {}, 1e308, -1, true, ['https://evil.example.com/cb'], [{ a: 1 }]),
);

describe('OAuth endpoints under junk input', function () {
  this.timeout(300_000);
  let api: Awaited<ReturnType<typeof startOAuthApi>>;
  let clientId: string;
  const previousLimits = { ...config.rateLimit };
  let cases = 0;
  before(async () => {
    Object.assign(config.rateLimit, { unauthenticatedPerWindow: 1_000_000 });
    api = await startOAuthApi();
    clientId = (await register(api.url, { client_name: 'Fuzzed', redirect_uris: ['https://client.example.com/cb'] })).body.client_id;
  });
  after(async () => {
    Object.assign(config.rateLimit, previousLimits);
    api.restore();
    await api.close();
    console.log(`      OAuth fuzz cases: ${cases}`);
  });

  const record = fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 10 })), hostile, { maxKeys: 8 });
  const jsonRecord = fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 10 })), jsonHostile, { maxKeys: 8 });

  async function check<T>(prop: fc.IAsyncProperty<T>): Promise<void> {
    const out = await fc.check(prop, { numRuns: FUZZ_RUNS * 2, seed: FUZZ_SEED, endOnFailure: true });
    if (out.failed)
      throw new Error(
        `${String(out.errorInstance instanceof Error ? out.errorInstance.message : out.errorInstance).slice(0, 1500)}\n(replay: FUZZ_SEED=${FUZZ_SEED})`,
      );
  }

  for (const path of ['/oauth/token', '/oauth/revoke', '/oauth/introspect', '/oauth/register']) {
    it(`${path}: random form and JSON bodies and content types answer a 4xx JSON error or a success`, async () => {
      await check(
        fc.asyncProperty(record, jsonRecord, fc.constantFrom('form', 'json', 'text', 'none', 'broken'), async (form, json, kind) => {
          const withClient = path === '/oauth/register' ? form : { client_id: clientId, ...form };
          const init: RequestInit =
            kind === 'form'
              ? {
                  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
                  body: new URLSearchParams(withClient as Record<string, string>).toString(),
                }
              : kind === 'json'
                ? { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(json) }
                : kind === 'text'
                  ? { headers: { 'Content-Type': 'text/plain' }, body: 'grant_type=authorization_code' }
                  : kind === 'broken'
                    ? { headers: { 'Content-Type': 'application/json' }, body: '{"grant_type":' }
                    : {};
          const res = await fetch(api.url + path, { method: 'POST', ...init });
          const text = await res.text();
          cases++;
          const what = `${path} ${kind} ${JSON.stringify(kind === 'json' ? json : withClient).slice(0, 300)}`;
          assert.ok(res.status < 500, `${what}: ${res.status} ${text.slice(0, 300)}`);
          if (res.status >= 400) assert.doesNotThrow(() => JSON.parse(text), `${what}: not JSON: ${text.slice(0, 200)}`);
        }),
      );
    });
  }

  it('/oauth/authorize and the interaction pages: random query strings and form posts never answer 5xx', async () => {
    const { challenge } = pkce();
    await check(
      fc.asyncProperty(record, fc.boolean(), async (params, withClient) => {
        const q = new URLSearchParams(params as Record<string, string>);
        if (withClient) {
          q.set('client_id', clientId);
          q.set('redirect_uri', 'https://client.example.com/cb');
          if (!q.has('code_challenge')) q.set('code_challenge', challenge);
          if (!q.has('code_challenge_method')) q.set('code_challenge_method', 'S256');
          if (!q.has('response_type')) q.set('response_type', 'code');
        }
        const browser = new Browser(api.url);
        const page = await browser.request('GET', `/oauth/authorize?${q}`);
        cases++;
        assert.ok(page.status < 500, `authorize ${q.toString().slice(0, 300)}: ${page.status}`);
        const location = page.location?.replace(api.url, '') ?? '';
        const action =
          /action="(\/oauth\/interaction\/[^"]+\/(?:login|confirm))"/.exec(page.html)?.[1] ??
          (/^\/oauth\/interaction\/[^/?]+$/.test(location) ? `${location}/login` : null);
        if (action) {
          const post = await browser.request('POST', action, params as Record<string, string>);
          cases++;
          assert.ok(post.status < 500, `${action} ${JSON.stringify(params).slice(0, 300)}: ${post.status}`);
        }
      }),
    );
  });
});
