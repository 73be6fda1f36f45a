import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { routeTable } from '../../api/rest/adapter';
import { restRouter } from '../../api/rest/routes';
import { openApiPath } from '../../api/openapi/document';
import { client, useApi } from '../support/app';
import { checkResponse } from '../support/contract';
import { workspaceWithKey } from '../support/factories';

// issue 17: the OpenAPI 3.1 document is generated from the route table and the operations,
// served unauthenticated and cacheable, and valid by a maintained validator.

describe('GET /v1/openapi.json', () => {
  const api = useApi();

  it('is a valid OpenAPI 3.1 document, served without a credential and cacheable', async () => {
    const res = await fetch(`${api.url}/v1/openapi.json`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    assert.match(res.headers.get('cache-control') ?? '', /public/);
    const etag = res.headers.get('etag');
    assert.ok(etag);
    const doc = (await res.json()) as any;
    assert.equal(doc.openapi, '3.1.0');
    const result = await new Validator().validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2)?.slice(0, 4000));
    const again = await fetch(`${api.url}/v1/openapi.json`, { headers: { 'If-None-Match': etag! } });
    assert.equal(again.status, 304);
  });

  it('documents every route of the table with its scopes, error codes and headers', async () => {
    const doc = (await (await fetch(`${api.url}/v1/openapi.json`)).json()) as any;
    const table = routeTable(restRouter());
    assert.ok(table.length >= 30);
    for (const { method, path, op } of table) {
      const o = doc.paths[openApiPath(path).path]?.[method];
      assert.ok(o, `${method} ${path} is documented`);
      assert.equal(o.operationId, op.name);
      assert.ok(o.responses['200'], `${op.name} 200`);
      if (!op.public) {
        assert.ok(o.responses['401']['x-error-codes'].includes('invalid_token'), `${op.name} 401`);
        assert.ok(o.responses['429'], `${op.name} 429`);
      }
    }
    const list = doc.paths['/v1/posts'].get;
    assert.deepEqual(list.security, [{ bearerAuth: ['posts:read'] }, { oauth2: ['posts:read'] }]);
    assert.deepEqual(list.responses['400']['x-error-codes'], ['invalid_request', 'bad_cursor', 'bad_pagination', 'version_unsupported']);
    assert.equal(list.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/posts.list.response');
    assert.ok(
      list.parameters.some(
        (p: { name: string; in: string; required: boolean }) => p.name === 'projectId' && p.in === 'query' && p.required,
      ),
    );
    const create = doc.paths['/v1/posts'].post;
    assert.ok(create.parameters.some((p: { $ref?: string }) => p.$ref === '#/components/parameters/IdempotencyKey'));
    assert.ok(create.responses['200'].headers['Idempotent-Replayed']);
    assert.ok(create.responses['409']['x-error-codes'].includes('conflict'));
    assert.deepEqual(create.requestBody.content['application/json'].schema.required, ['projectId']);
    const patch = doc.paths['/v1/posts/{postId}'].patch;
    assert.ok(patch.parameters.some((p: { name: string; in: string }) => p.name === 'postId' && p.in === 'path'));
    assert.equal(patch.requestBody.content['application/json'].schema.properties.postId, undefined);
    assert.deepEqual(doc.paths['/v1/health'].get.security, []);
    assert.equal(doc.components.schemas.Error.properties.error.required.join(), 'code,message,request_id,docs_url');
    // spec 2.1: the webhook endpoint list carries pagination.total.
    assert.ok(doc.components.schemas['webhookEndpoints.list.response'].properties.pagination.required.includes('total'));
  });

  it('the contract check refuses a field the schema does not describe and an undocumented code', async () => {
    const { key, project } = await workspaceWithKey();
    const call = client(api.url, key);
    const post = (await call('POST', '/v1/posts', { body: { projectId: project.id, content: 'x' } })).body;
    const url = `${api.url}/v1/posts/${post.data.id}`;
    assert.deepEqual(checkResponse('PATCH', url, 200, 'application/json', post), []);
    const extra = checkResponse('PATCH', url, 200, 'application/json', { data: { ...post.data, surprise: 1 } });
    assert.match(extra.join(), /surprise/);
    const code = checkResponse('GET', `${api.url}/v1/health`, 409, 'application/json', {
      error: { code: 'conflict', message: 'x', request_id: 'req_1', docs_url: 'https://x/y' },
    });
    assert.match(code.join(), /not documented/);
    // Every operation of the REST door describes its answer (issue 17): none is left to the envelope check.
    const doc = (await call('GET', '/v1/openapi.json')).body as any;
    const undescribed = Object.entries(doc.paths as Record<string, Record<string, any>>)
      .filter(([path]) => path.startsWith('/v1/'))
      .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as const))
      .filter(([, op]) => op.responses['200']?.content?.['application/json']?.schema?.$ref === '#/components/schemas/DataEnvelope')
      .map(([name]) => name);
    assert.deepEqual(undescribed, []);
    assert.match(checkResponse('GET', `${api.url}/v1/calendar`, 200, 'application/json', { items: [] }).join(), /data/);
  });

  it('declares on every path the 400 invalid_request the listener answers before routing (api/listen.ts)', async () => {
    const doc = (await client(api.url)('GET', '/v1/openapi.json')).body as any;
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(ops)) {
        const refusal = op.responses['400'];
        assert.ok(refusal?.content?.['application/json'], `${method} ${path}: a JSON 400`);
        assert.ok(refusal['x-error-codes'].includes('invalid_request'), `${method} ${path}: invalid_request`);
      }
    }
  });

  it('describes the authorization server: form-encoded bodies, the RFC answers and the 7.3 envelope', async () => {
    const doc = (await client(api.url)('GET', '/v1/openapi.json')).body as any;
    const token = doc.paths['/oauth/token'].post;
    assert.ok(token.requestBody.content['application/x-www-form-urlencoded'].schema.required.includes('grant_type'));
    assert.equal(token.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/OAuthTokenResponse');
    assert.deepEqual(token.responses['401']['x-error-codes'], ['invalid_client']);
    for (const path of ['/oauth/authorize', '/oauth/revoke', '/oauth/introspect', '/oauth/register'])
      assert.ok(doc.paths[path], `${path} is described`);
    assert.ok(doc.paths['/.well-known/oauth-authorization-server'].get);
    assert.ok(doc.paths['/.well-known/oauth-protected-resource'].get);
    const url = `${api.url}/oauth/token`;
    const issued = { access_token: 'oat_x', token_type: 'Bearer', expires_in: 3600, scope: 'posts:read' };
    assert.deepEqual(checkResponse('POST', url, 200, 'application/json', issued), []);
    assert.match(checkResponse('POST', url, 200, 'application/json', { ...issued, id_token: 'x' }).join(), /id_token/);
    assert.match(checkResponse('POST', url, 200, 'application/json', { ...issued, token_type: 'bearer' }).join(), /token_type/);
    const envelope = (code: string) => ({ error: { code, message: 'x', request_id: 'req_1', docs_url: 'https://x/y' } });
    assert.deepEqual(checkResponse('POST', url, 400, 'application/json', envelope('invalid_grant')), []);
    // A REST-only code, an RFC error body instead of the envelope, or a code of another status fail.
    assert.match(checkResponse('POST', url, 400, 'application/json', envelope('bad_cursor')).join(), /bad_cursor|allowed values/);
    assert.match(checkResponse('POST', url, 400, 'application/json', { error: 'invalid_grant' }).join(), /must be object/);
    assert.match(checkResponse('POST', url, 401, 'application/json', envelope('invalid_grant')).join(), /invalid_grant/);
    // The revocation's 200 and the authorize redirect carry no JSON body.
    assert.deepEqual(checkResponse('POST', `${api.url}/oauth/revoke`, 200, 'text/plain; charset=utf-8', ''), []);
    assert.match(checkResponse('POST', `${api.url}/oauth/revoke`, 200, 'application/json', {}).join(), /documented without/);
    assert.deepEqual(checkResponse('GET', `${api.url}/oauth/authorize?client_id=x`, 303, 'text/html', 'Redirecting'), []);
    // The authorize 400 is its HTML page, or the listener's envelope for a request refused before routing.
    const authorize = `${api.url}/oauth/authorize?client_id=x`;
    assert.deepEqual(checkResponse('GET', authorize, 400, 'text/html; charset=utf-8', '<p>Unknown client</p>'), []);
    assert.deepEqual(checkResponse('GET', authorize, 400, 'application/json', envelope('invalid_request')), []);
    assert.match(checkResponse('GET', authorize, 400, 'application/json', envelope('invalid_grant')).join(), /invalid_grant/);
    assert.match(checkResponse('GET', authorize, 431, 'text/plain', '').join(), /not JSON/);
    assert.deepEqual(checkResponse('POST', `${api.url}/oauth/introspect`, 200, 'application/json', { active: false }), []);
    assert.match(checkResponse('POST', `${api.url}/oauth/introspect`, 200, 'application/json', { active: false, sub: 'u' }).join(), /./);
  });
});
