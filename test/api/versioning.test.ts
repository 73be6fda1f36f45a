import assert from 'node:assert/strict';
import { config } from '../../lib/config';
import { client, useApi } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { assertError } from '../support/foundation';

// spec 9: Service-Api-Version is optional; the version that applied is echoed, a named
// supported version is honoured, anything else is 400 version_unsupported.

describe('Service-Api-Version (spec 9)', () => {
  const api = useApi();
  let key: string;
  before(async () => {
    key = (await workspaceWithKey()).key;
  });

  it('applies and echoes the current version when the header is omitted', async () => {
    const res = await client(api.url, key)('GET', '/v1/workspaces/me');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('service-api-version'), config.apiVersions.current);
    assert.equal(res.headers.get('service-api-version'), '2026-08-10');
  });

  it('accepts and echoes 2026-08-01 and 2026-08-10', async () => {
    for (const v of ['2026-08-01', '2026-08-10']) {
      const res = await client(api.url, key)('GET', '/v1/workspaces/me', { headers: { 'Service-Api-Version': v } });
      assert.equal(res.status, 200, v);
      assert.equal(res.headers.get('service-api-version'), v);
    }
  });

  it('answers any other value with 400 version_unsupported', async () => {
    for (const v of ['2026-08-02', '2025-01-01', 'latest', '2026-8-1', '20260810']) {
      const res = await client(api.url, key)('GET', '/v1/workspaces/me', { headers: { 'Service-Api-Version': v } });
      assertError(res, 400, 'version_unsupported');
    }
  });

  it('checks the version before the credential', async () => {
    assertError(
      await client(api.url)('GET', '/v1/projects', { headers: { 'Service-Api-Version': '1999-01-01' } }),
      400,
      'version_unsupported',
    );
  });
});
