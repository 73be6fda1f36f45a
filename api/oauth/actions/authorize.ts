import type { Context, Next } from 'koa';
import { findClient, redirectUriMatches } from '../clients';
import { AuthorizationPageError, InvalidClient, InvalidRequest, InvalidScope, UnsupportedResponseType } from '../errors';
import { oauthState } from '../http';
import { queryParams } from '../params';
import { requestedBinding, type ResourceBinding } from '../resources';
import { expandScopes, isSubset, parseScope } from '../scopes';
import { createInteraction, ensureSession } from '../session';
import { browserErrors } from './respond';

// GET /oauth/authorize (spec 5.3.2). Chain: parameters → client → redirect URI (the last two
// fail as a page, never as a redirect) → response type → PKCE → scope → resource → hand over
// to the interaction pages (sign-in, consent).

/** RFC 6749 3.3: when scope is omitted, the client's registered scope, else read-only access. */
const DEFAULT_SCOPE = 'read';

async function readParams(ctx: Context, next: Next) {
  try {
    Object.assign(oauthState(ctx), queryParams(ctx));
  } catch (err) {
    throw new AuthorizationPageError('Invalid authorization request', (err as Error).message);
  }
  await next();
}

/**
 * A registered client_id, or a Client Identifier URL whose metadata document is fetched and
 * checked now (clientDocuments.ts); a document that fails is the draft's "invalid client"
 * (draft-ietf-oauth-client-id-metadata-document 5.1, 6: abort, RFC 6749 4.1.2.1: no redirect).
 */
async function identifyClient(ctx: Context, next: Next) {
  const st = oauthState(ctx);
  const clientId = st.params.client_id;
  let client;
  try {
    client = clientId ? await findClient(clientId, ctx.ip) : undefined;
  } catch (err) {
    if (err instanceof InvalidClient)
      throw new AuthorizationPageError('This application cannot be verified', err.message, 'invalid_client');
    throw err;
  }
  if (!client)
    throw new AuthorizationPageError(
      'Unknown application',
      clientId
        ? 'The application that sent you here is not registered with this service.'
        : 'The request does not say which application sent you here (client_id is missing).',
      'invalid_client',
    );
  st.client = client;
  await next();
}

/** RFC 6749 3.1.2.3 exact match; RFC 8252 7.3 lets only the port of a loopback IP vary. */
async function checkRedirectUri(ctx: Context, next: Next) {
  const st = oauthState(ctx);
  const uri = st.params.redirect_uri;
  if (!uri)
    throw new AuthorizationPageError(
      'Invalid authorization request',
      'The request does not say where to return (redirect_uri is missing).',
      'invalid_request',
    );
  if (!redirectUriMatches(st.client!.redirect_uris, uri)) {
    throw new AuthorizationPageError(
      'Invalid redirect address',
      st.client!.metadata_url
        ? 'The application asked to return to an address its metadata document does not list, so you were not sent there.'
        : 'The application asked to return to an address it has not registered, so you were not sent there.',
      'invalid_request',
    );
  }
  st.redirect = { uri, state: st.params.state ?? null };
  await next();
}

async function checkResponseType(ctx: Context, next: Next) {
  const type = oauthState(ctx).params.response_type;
  if (!type) throw new InvalidRequest('response_type is required.');
  if (type !== 'code') throw new UnsupportedResponseType('Only response_type=code is supported.');
  await next();
}

/** OAuth 2.1 / RFC 7636: PKCE is required, S256 only ("plain" is refused). */
async function checkPkce(ctx: Context, next: Next) {
  const { code_challenge: challenge, code_challenge_method: method } = oauthState(ctx).params;
  if (!challenge) throw new InvalidRequest('code_challenge is required (PKCE with S256).');
  if (method !== 'S256')
    throw new InvalidRequest(
      method ? `code_challenge_method "${method}" is not supported; use S256.` : 'code_challenge_method=S256 is required.',
    );
  // RFC 7636 4.2: BASE64URL(SHA256(verifier)) is 43 characters.
  if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) throw new InvalidRequest('code_challenge is not a base64url SHA-256 digest.');
  await next();
}

async function checkScope(ctx: Context, next: Next) {
  const st = oauthState(ctx);
  const requested = expandScopes(parseScope(st.params.scope ?? st.client!.scope ?? DEFAULT_SCOPE));
  if (requested.length === 0) throw new InvalidScope('The request names no scope.');
  // RFC 7591 2: a client that registered a scope list may not ask for more.
  if (st.client!.scope && !isSubset(requested, expandScopes(parseScope(st.client!.scope)))) {
    throw new InvalidScope('The request asks for scopes this client did not register.');
  }
  ctx.state.requestedScopes = requested;
  await next();
}

/**
 * RFC 8707 2.1: `resource` names the resource server the token is for, one of ours (REST or
 * MCP); the code and every token from it are bound to it. Malformed or unknown indicators are
 * `invalid_target`, sent on the redirect like any error found after the redirect URI is
 * trusted. Without the parameter (or naming both) the token is valid for both resources.
 */
async function checkResource(ctx: Context, next: Next) {
  ctx.state.resource = requestedBinding(oauthState(ctx).resources);
  await next();
}

async function startInteraction(ctx: Context) {
  const st = oauthState(ctx);
  const session = await ensureSession(ctx);
  const ix = await createInteraction({
    sid: session.sid,
    // The client_id as presented: a document client is looked up through its document again on every page.
    clientId: st.client!.metadata_url ?? st.client!.id,
    redirectUri: st.redirect!.uri,
    state: st.redirect!.state,
    codeChallenge: st.params.code_challenge!,
    requestedScopes: ctx.state.requestedScopes as string[],
    resource: ctx.state.resource as ResourceBinding,
    forceConsent: (st.params.prompt ?? '').split(' ').includes('consent'),
  });
  ctx.set('Cache-Control', 'no-store');
  ctx.status = 303;
  ctx.redirect(`/oauth/interaction/${ix.uid}`);
}

export const authorizeEndpoint = [
  browserErrors,
  readParams,
  identifyClient,
  checkRedirectUri,
  checkResponseType,
  checkPkce,
  checkScope,
  checkResource,
  startInteraction,
];
