// Who a token acts for (docs/network-protocol.md, `GET /v2/userinfo` and
// `GET /rest/organizationAcls`): the person, and the organizations it administers.

import { restError } from '../responses';
import { parseAuthorUrn } from '../state';
import { authenticate, versioned, type Routes } from './common';

const ACL_DEFAULT_COUNT = 100;
const ACL_MAX_COUNT = 100;

export const identityRoutes: Routes = {
  'GET /v2/userinfo': {
    operation: 'identity',
    style: 'rest',
    handle: (ctx, req) => {
      const auth = authenticate(ctx, req);
      if ('error' in auth) return auth.error;
      const p = auth.person;
      const space = p.name.indexOf(' ');
      const body: Record<string, unknown> = {
        sub: p.id,
        name: p.name,
        given_name: space < 0 ? p.name : p.name.slice(0, space),
        family_name: space < 0 ? '' : p.name.slice(space + 1),
        locale: { country: 'US', language: 'en' },
      };
      if (p.pictureUrl !== null) body.picture = p.pictureUrl;
      if (p.vanityName !== null) body.preferred_username = p.vanityName;
      return { status: 200, body };
    },
  },
  'GET /rest/organizationAcls': {
    operation: 'admins',
    style: 'rest',
    handle: versioned((ctx, _caller, _req, url) => {
      const q = url.searchParams;
      if (q.get('q') !== 'organization') return restError(400, 'ILLEGAL_ARGUMENT', 'only the q=organization finder is supported');
      const org = parseAuthorUrn(q.get('organization') ?? '');
      if (!org || org.type !== 'organization') return restError(400, 'ILLEGAL_ARGUMENT', 'organization must be urn:li:organization:<id>');
      const start = Number(q.get('start') ?? '0');
      const count = Number(q.get('count') ?? String(ACL_DEFAULT_COUNT));
      if (!Number.isInteger(start) || start < 0 || !Number.isInteger(count) || count < 1 || count > ACL_MAX_COUNT) {
        return restError(400, 'ILLEGAL_ARGUMENT', `start must be >= 0 and count between 1 and ${ACL_MAX_COUNT}`);
      }
      // Only approved administrators are modelled: any other role or state filter matches nobody.
      const role = q.get('role');
      const state = q.get('state');
      const all =
        (role === null || role === 'ADMINISTRATOR') && (state === null || state === 'APPROVED')
          ? (ctx.state.orgAdmins.get(org.id)?.list ?? [])
          : [];
      const orgUrn = `urn:li:organization:${org.id}`;
      return {
        status: 200,
        body: {
          elements: all.slice(start, start + count).map((personId) => ({
            organization: orgUrn,
            roleAssignee: `urn:li:person:${personId}`,
            role: 'ADMINISTRATOR',
            state: 'APPROVED',
          })),
          paging: { start, count, total: all.length, links: [] },
        },
      };
    }),
  },
};
