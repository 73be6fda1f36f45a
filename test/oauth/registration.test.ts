import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { z } from 'zod';
import { ALL_SCOPES } from '../../lib/scopes';
import { protectedResourceMetadata } from '../../api/oauth/router';
import { registrationMetadataSchema } from '../../api/oauth/schema';
import { getJson, register, useOAuthApi } from './support';

describe('OAuth discovery and registration (spec 5.3, 5.3.1)', () => {
  const api = useOAuthApi();

  it('serves RFC 8414 metadata, unauthenticated and cacheable', async () => {
    const res = await getJson(`${api.url}/.well-known/oauth-authorization-server`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('cache-control') ?? '', /public, max-age=\d+/);
    const m = res.body;
    assert.equal(m.issuer, api.url);
    assert.equal(m.authorization_endpoint, `${api.url}/oauth/authorize`);
    assert.equal(m.token_endpoint, `${api.url}/oauth/token`);
    assert.equal(m.registration_endpoint, `${api.url}/oauth/register`);
    assert.equal(m.revocation_endpoint, `${api.url}/oauth/revoke`);
    assert.equal(m.introspection_endpoint, `${api.url}/oauth/introspect`);
    assert.deepEqual(m.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(m.token_endpoint_auth_methods_supported, ['none']);
    assert.deepEqual(m.response_types_supported, ['code']);
    assert.deepEqual(m.grant_types_supported, ['authorization_code', 'refresh_token']);
    assert.equal(m.authorization_response_iss_parameter_supported, true);
    assert.deepEqual(m.scopes_supported, [...ALL_SCOPES]);
  });

  it('serves RFC 9728 metadata for the REST resource, and builds it for any resource', async () => {
    const res = await getJson(`${api.url}/.well-known/oauth-protected-resource`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('cache-control') ?? '', /public/);
    const m = res.body;
    assert.equal(m.resource, api.url);
    assert.deepEqual(m.authorization_servers, [api.url]);
    assert.deepEqual(m.bearer_methods_supported, ['header']);
    assert.ok(m.scopes_supported.includes('posts:read'));
    const mcp = protectedResourceMetadata('https://mcp.example.com');
    assert.equal(mcp.resource, 'https://mcp.example.com');
    assert.deepEqual(mcp.authorization_servers, [api.url]);
  });

  it('registers a public client: 201, client_id, issued-at, metadata, no secret', async () => {
    const res = await register(api.url, {
      client_name: 'Example Agent',
      client_uri: 'https://agent.example.com',
      logo_uri: 'https://agent.example.com/logo.png',
      redirect_uris: ['https://agent.example.com/cb'],
      scope: 'read posts:write',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      contacts: ['ignored@example.com'],
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.match(res.body.client_id, /^cli_/);
    assert.equal(typeof res.body.client_id_issued_at, 'number');
    assert.ok(Math.abs(res.body.client_id_issued_at - Date.now() / 1000) < 60);
    assert.equal(res.body.client_name, 'Example Agent');
    assert.deepEqual(res.body.redirect_uris, ['https://agent.example.com/cb']);
    assert.equal(res.body.scope, 'read posts:write');
    assert.equal(res.body.token_endpoint_auth_method, 'none');
    assert.equal(res.body.client_secret, undefined);
    assert.equal(res.headers.get('cache-control'), 'no-store');
  });

  it('defaults to auth method none, the code flow with refresh tokens', async () => {
    const res = await register(api.url, { redirect_uris: ['http://localhost:8080/callback'] });
    assert.equal(res.status, 201);
    assert.equal(res.body.token_endpoint_auth_method, 'none');
    assert.deepEqual(res.body.grant_types, ['authorization_code', 'refresh_token']);
    assert.deepEqual(res.body.response_types, ['code']);
  });

  it('accepts https, loopback http and private-use schemes', async () => {
    const res = await register(api.url, {
      redirect_uris: [
        'https://app.example.com/cb',
        'http://127.0.0.1/cb',
        'http://[::1]:9000/cb',
        'http://localhost/cb',
        'com.example.app:/oauth2redirect',
      ],
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  });

  for (const [label, metadata] of [
    ['a confidential auth method', { redirect_uris: ['https://a.example.com/cb'], token_endpoint_auth_method: 'client_secret_basic' }],
    ['client_secret_post', { redirect_uris: ['https://a.example.com/cb'], token_endpoint_auth_method: 'client_secret_post' }],
    ['plain http on a public host', { redirect_uris: ['http://a.example.com/cb'] }],
    ['a fragment', { redirect_uris: ['https://a.example.com/cb#frag'] }],
    ['a javascript: URI', { redirect_uris: ['javascript:alert(1)'] }],
    ['a relative URI', { redirect_uris: ['/cb'] }],
    ['no redirect URIs', { redirect_uris: [] }],
    ['missing redirect_uris', { client_name: 'x' }],
    ['the implicit grant', { redirect_uris: ['https://a.example.com/cb'], grant_types: ['implicit'] }],
    ['client_credentials', { redirect_uris: ['https://a.example.com/cb'], grant_types: ['client_credentials'] }],
    ['a token response type', { redirect_uris: ['https://a.example.com/cb'], response_types: ['token'] }],
    ['an http logo', { redirect_uris: ['https://a.example.com/cb'], logo_uri: 'http://evil.example.com/x.png' }],
  ] as const) {
    it(`refuses ${label} with 400 invalid_client_metadata`, async () => {
      const res = await register(api.url, metadata);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error.code, 'invalid_client_metadata');
      assert.match(res.body.error.request_id, /^req_/);
      assert.ok(res.body.error.docs_url);
    });
  }

  it('documents the /oauth/register body with the schema the handler validates, and both agree on what they accept', async () => {
    const doc = (await getJson(`${api.url}/v1/openapi.json`)).body;
    const documented = doc.paths['/oauth/register'].post.requestBody.content['application/json'].schema;
    const { $schema: _dialect, ...handlers } = z.toJSONSchema(registrationMetadataSchema, { io: 'input', unrepresentable: 'any' });
    assert.deepEqual(documented, handlers);
    const accepts = new Ajv2020({ strict: false }).compile(documented);
    // Once drifted (issue 28): the document allowed only "none" and the two grants while the
    // handler parsed any string, and the document refused the null the handler takes.
    for (const metadata of [
      { redirect_uris: ['https://a.example.com/cb'], client_name: null, token_endpoint_auth_method: 'none' },
      { redirect_uris: ['https://a.example.com/cb'], grant_types: ['authorization_code'], extension: 1 },
      { redirect_uris: ['https://a.example.com/cb'], token_endpoint_auth_method: 'client_secret_basic' },
      { redirect_uris: ['https://a.example.com/cb'], grant_types: ['implicit'] },
      { redirect_uris: ['https://a.example.com/cb'], response_types: ['token'] },
    ]) {
      const res = await register(api.url, metadata);
      assert.equal(res.status === 201, accepts(metadata), `${JSON.stringify(metadata)}: ${res.status} ${JSON.stringify(res.body)}`);
    }
  });

  it('refuses unknown scope tokens with invalid_scope', async () => {
    const res = await register(api.url, { redirect_uris: ['https://a.example.com/cb'], scope: 'posts:read posts:fly' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'invalid_scope');
    assert.match(res.body.error.message, /posts:fly/);
  });

  it('returns the existing client_id for the same software_id, software_version and redirect_uris', async () => {
    const meta = {
      client_name: 'Desktop',
      redirect_uris: ['http://127.0.0.1/cb', 'https://d.example.com/cb'],
      software_id: `sw-${Date.now()}`,
      software_version: '1.2.3',
    };
    const first = await register(api.url, meta);
    const again = await register(api.url, { ...meta, redirect_uris: [...meta.redirect_uris].reverse(), client_name: 'Renamed' });
    assert.equal(again.status, 201);
    assert.equal(again.body.client_id, first.body.client_id);
    assert.equal(again.body.client_name, 'Desktop', 'a re-registration does not rename the client');
    const otherVersion = await register(api.url, { ...meta, software_version: '1.2.4' });
    assert.notEqual(otherVersion.body.client_id, first.body.client_id);
    const otherUris = await register(api.url, { ...meta, redirect_uris: ['https://d.example.com/cb'] });
    assert.notEqual(otherUris.body.client_id, first.body.client_id);
    const noVersion = await register(api.url, { ...meta, software_version: undefined });
    assert.notEqual(noVersion.body.client_id, first.body.client_id);
  });
});
