import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { constantTimeEqual } from '../../../lib/crypto';
import { db } from '../../../lib/db';
import { redirectUriMatches } from '../clients';
import { InvalidGrant, InvalidRequest } from '../errors';
import type { CodeRow } from '../grants';
import { oauthState } from '../http';
import { required } from '../params';
import { narrowBinding } from '../resources';
import {
  createFamily,
  insertAccessToken,
  insertRefreshToken,
  issuesRefreshToken,
  publishTokenInvalidation,
  randomToken,
  revokeFamilies,
  tokenHash,
  tokenResponse,
  ACCESS_TOKEN_PREFIX,
  REFRESH_TOKEN_PREFIX,
} from '../tokens';

// grant_type=authorization_code (spec 5.3.4; RFC 6749 4.1.3; RFC 7636 4.5-4.6; RFC 8707 2.2).
//
// Checks are made on a plain read first so that a wrong client, redirect URI or verifier
// leaves the code usable by its rightful holder; the code is then consumed by one atomic
// UPDATE ... WHERE consumed_at IS NULL in the transaction that issues the tokens, so exactly
// one request wins. `resource`, when sent, must be within what the code was granted for (the
// one resource of the authorization request, or either when it named none); the access token
// is bound to it, the family keeps the code's binding for later refreshes. A code presented
// again (RFC 6749 4.1.2: "SHOULD revoke all tokens previously issued based on that
// authorization code") revokes the family issued from it.

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

async function revokeIssuedFrom(codeHash: string): Promise<void> {
  const families = (await db()('oauth_token_families').where({ code_hash: codeHash }).pluck('id')) as string[];
  if (families.length) {
    await revokeFamilies(db(), families, 'code_reuse');
    await publishTokenInvalidation(`code-reuse:${families.join(',')}`);
  }
}

export async function authorizationCodeGrant(ctx: Context): Promise<void> {
  const { params, client, resources } = oauthState(ctx);
  const code = required(params, 'code');
  const redirectUri = required(params, 'redirect_uri');
  const verifier = params.code_verifier;
  if (!verifier) throw new InvalidRequest('code_verifier is required (PKCE).');

  const codeHash = tokenHash(code);
  const row = (await db()('oauth_codes').where({ code_hash: codeHash }).first()) as CodeRow | undefined;
  if (!row) throw new InvalidGrant('The authorization code is unknown.');
  if (row.consumed_at) {
    await revokeIssuedFrom(codeHash);
    throw new InvalidGrant('The authorization code was already used; the tokens issued for it are revoked.');
  }
  if (row.client_id !== client!.id) throw new InvalidGrant('The authorization code was issued to another client.');
  if (row.expires_at.getTime() <= Date.now()) throw new InvalidGrant('The authorization code has expired.');
  // RFC 6749 4.1.3: identical to the redirect_uri of the authorization request.
  if (row.redirect_uri !== redirectUri) throw new InvalidGrant('redirect_uri does not match the authorization request.');
  // The client's redirect URIs as they are now: a metadata document may have dropped this one
  // since the authorization request (draft-ietf-oauth-client-id-metadata-document 8.4).
  if (!redirectUriMatches(client!.redirect_uris, row.redirect_uri))
    throw new InvalidGrant("The redirect URI of the authorization request is no longer one of the client's.");
  if (!VERIFIER.test(verifier) || !constantTimeEqual(s256(verifier), row.code_challenge))
    throw new InvalidGrant('PKCE verification failed: code_verifier does not match code_challenge.');
  // Still on the plain read: a request for the wrong resource leaves the code usable.
  const resource = narrowBinding(row.resource, resources);

  const issued = await db().transaction(async (trx) => {
    const consumed = await trx('oauth_codes')
      .where({ code_hash: codeHash })
      .whereNull('consumed_at')
      .update({ consumed_at: trx.fn.now() })
      .returning('code_hash');
    if (consumed.length === 0) return null;
    const grant = await trx('oauth_grants').where({ id: row.grant_id }).whereNull('revoked_at').first('id');
    if (!grant) return 'grant_revoked' as const;
    const family = await createFamily(trx, {
      grantId: row.grant_id,
      clientId: row.client_id,
      userId: row.user_id,
      workspaceId: row.workspace_id,
      defaultProjectId: row.default_project_id,
      scopes: row.scopes,
      codeHash,
      resource: row.resource,
    });
    const access = randomToken(ACCESS_TOKEN_PREFIX);
    const accessRow = await insertAccessToken(trx, family, access, row.scopes, resource);
    let refresh: string | null = null;
    if (issuesRefreshToken(row.scopes, client!.grant_types)) {
      refresh = randomToken(REFRESH_TOKEN_PREFIX);
      await insertRefreshToken(trx, family.id, refresh, accessRow.id, null);
    }
    return tokenResponse({ plaintext: access, row: accessRow }, refresh);
  });
  if (issued === null) {
    // Lost the race to a concurrent exchange of the same code: that is reuse too.
    await revokeIssuedFrom(codeHash);
    throw new InvalidGrant('The authorization code was already used; the tokens issued for it are revoked.');
  }
  if (issued === 'grant_revoked') throw new InvalidGrant('The consent behind this code has been revoked.');
  ctx.body = issued;
}
