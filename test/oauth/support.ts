import { createHash, randomBytes } from 'node:crypto';
import { config } from '../../lib/config';
import { randomBase62 } from '../../lib/ids';
import { redis } from '../../lib/redis';
import { startApi, type TestServer } from '../support/app';
import { enforceContract } from '../support/contract';
import { member, PASSWORD } from '../support/factories';

// Helpers for the OAuth tests: the real app over HTTP, with the issuer set to the address the
// test server listens on (config is read once at import, so the test points it at itself).

/**
 * Registration and sign-in are rate limited per client address (120 a minute), and every test
 * comes from 127.0.0.1: each test file starts with empty windows so the suite as a whole fits.
 */
export async function resetOAuthRateLimits(): Promise<void> {
  const keys = await redis().keys('rl:unauthenticated:oauth-*');
  if (keys.length) await redis().del(...keys);
}

export async function startOAuthApi(): Promise<TestServer & { restore(): void }> {
  await resetOAuthRateLimits();
  const api = await startApi();
  const previous = config.publicUrl;
  (config as { publicUrl: string }).publicUrl = api.url;
  return {
    ...api,
    restore: () => {
      (config as { publicUrl: string }).publicUrl = previous;
    },
  };
}

/**
 * The OAuth-enabled API for the enclosing `describe` block: started in its `before` hook,
 * stopped (and the public URL restored) in its `after` hook.
 */
export function useOAuthApi(): TestServer & { restore(): void } {
  const api = {} as TestServer & { restore(): void };
  before(async () => {
    Object.assign(api, await startOAuthApi());
  });
  after(async () => {
    api.restore();
    await api.close();
  });
  return api;
}

export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function register(baseUrl: string, metadata: Record<string, unknown>) {
  const res = await fetch(`${baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(metadata),
  });
  const body = (await res.json()) as any;
  // The OAuth answers are held to the OpenAPI document like the REST ones (test/support/contract.ts).
  enforceContract('POST', res.url, res.status, res.headers.get('content-type'), body);
  return { status: res.status, body, headers: res.headers };
}

/** A discovery document (or any unauthenticated GET), checked against the OpenAPI document. */
export async function getJson(url: string) {
  const res = await fetch(url);
  const text = await res.text();
  const body = text ? (JSON.parse(text) as any) : null;
  enforceContract('GET', url, res.status, res.headers.get('content-type'), body);
  return { status: res.status, body, headers: res.headers };
}

export async function form(
  baseUrl: string,
  path: string,
  params: Record<string, string | undefined>,
  headers: Record<string, string> = {},
) {
  const body = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body,
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  enforceContract('POST', res.url, res.status, res.headers.get('content-type'), parsed);
  return { status: res.status, body: parsed, text, headers: res.headers };
}

/**
 * A minimal cookie-keeping user agent that follows no redirects by itself, for driving the
 * sign-in and consent pages without a browser (the browser test is test/oauth/e2e.test.ts).
 */
export class Browser {
  private cookies = new Map<string, string>();
  constructor(readonly baseUrl: string) {}

  private remember(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
  }

  async request(method: 'GET' | 'POST', pathOrUrl: string, formBody?: Record<string, string>) {
    const url = pathOrUrl.startsWith('http') ? pathOrUrl : this.baseUrl + pathOrUrl;
    const headers: Record<string, string> = {};
    if (this.cookies.size) headers.Cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (formBody) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(formBody).toString();
    }
    const res = await fetch(url, { method, headers, body, redirect: 'manual' });
    this.remember(res);
    const html = await res.text();
    const contentType = res.headers.get('content-type');
    enforceContract(method, url, res.status, contentType, contentType?.includes('application/json') ? JSON.parse(html) : html);
    return { status: res.status, location: res.headers.get('location'), html, headers: res.headers };
  }

  /** Follows same-origin redirects; stops at the first redirect leaving the server (the client's redirect URI). */
  async follow(method: 'GET' | 'POST', path: string, formBody?: Record<string, string>) {
    let res = await this.request(method, path, formBody);
    while (
      res.status >= 300 &&
      res.status < 400 &&
      res.location &&
      (res.location.startsWith('/') || res.location.startsWith(this.baseUrl))
    ) {
      res = await this.request('GET', res.location);
    }
    return res;
  }
}

export function csrfOf(html: string): string {
  const m = /name="csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error(`no csrf token in page: ${html.slice(0, 500)}`);
  return m[1]!;
}

export function formAction(html: string, suffix: string): string {
  const m = new RegExp(`action="(/oauth/interaction/[^"]+/${suffix})"`).exec(html);
  if (!m) throw new Error(`no ${suffix} form in page`);
  return m[1]!;
}

export interface AuthorizeOptions {
  clientId: string;
  redirectUri: string;
  scope?: string;
  state?: string;
  challenge?: string;
  method?: string;
  extra?: Record<string, string>;
  /** RFC 8707 `resource` indicators, one parameter each (the parameter may repeat). */
  resources?: string[];
}

export function authorizePath(o: AuthorizeOptions): string {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: o.clientId,
    redirect_uri: o.redirectUri,
    state: o.state ?? 'st-123',
    ...o.extra,
  });
  if (o.scope !== undefined) q.set('scope', o.scope);
  if (o.challenge !== undefined) q.set('code_challenge', o.challenge);
  if (o.method !== undefined) q.set('code_challenge_method', o.method);
  for (const r of o.resources ?? []) q.append('resource', r);
  return `/oauth/authorize?${q}`;
}

/** Sign in on the interaction page the authorize request led to; returns the page after sign-in. */
export async function signIn(browser: Browser, page: { html: string }, email: string, password = PASSWORD) {
  return browser.follow('POST', formAction(page.html, 'login'), { csrf: csrfOf(page.html), email, password });
}

/**
 * The whole browser leg over plain HTTP: authorize → sign in → consent → redirect. Returns
 * the redirect URL the server sent the browser to.
 */
export async function authorizeCode(
  baseUrl: string,
  o: AuthorizeOptions & { email: string; access?: 'read' | 'full'; workspace?: string; project?: string; browser?: Browser },
) {
  const browser = o.browser ?? new Browser(baseUrl);
  return { ...(await approve(browser, authorizePath({ method: 'S256', ...o }), o)), browser };
}

/**
 * Completes an authorization request a client built itself (the MCP SDK's, say) like a user
 * would; answers the URL the server redirected back to.
 */
export async function consent(
  authorizationUrl: URL,
  o: { email: string; access?: 'read' | 'full'; workspace?: string; project?: string },
): Promise<URL> {
  return (await approve(new Browser(authorizationUrl.origin), authorizationUrl.href, o)).redirect;
}

/** From an authorize request (path or URL) to the redirect back: sign in if asked, then approve on the consent or welcome-back page. */
async function approve(
  browser: Browser,
  authorizeRequest: string,
  o: { email: string; access?: 'read' | 'full'; workspace?: string; project?: string },
) {
  let page = await browser.follow('GET', authorizeRequest);
  if (page.html.includes('name="password"')) page = await signIn(browser, page, o.email);
  if (page.status !== 200) throw new Error(`unexpected page ${page.status}: ${page.html.slice(0, 300)}`);
  const fields: Record<string, string> = { csrf: csrfOf(page.html), decision: 'approve', access: o.access ?? 'full' };
  if (page.html.includes('name="mode" value="welcome_back"')) fields.mode = 'welcome_back';
  else {
    fields.workspace = o.workspace ?? /name="workspace" value="([^"]*)"/.exec(page.html)![1]!;
    if (o.project !== undefined) fields.project = o.project;
  }
  const done = await browser.request('POST', formAction(page.html, 'confirm'), fields);
  if (done.status !== 303 || !done.location) throw new Error(`consent did not redirect: ${done.status} ${done.html.slice(0, 500)}`);
  return { redirect: new URL(done.location), consentPage: page };
}

export async function exchangeCode(baseUrl: string, p: { clientId: string; code: string; redirectUri: string; verifier: string }) {
  return form(baseUrl, '/oauth/token', {
    grant_type: 'authorization_code',
    client_id: p.clientId,
    code: p.code,
    redirect_uri: p.redirectUri,
    code_verifier: p.verifier,
  });
}

export async function refresh(baseUrl: string, p: { clientId: string; refreshToken: string; scope?: string }) {
  return form(baseUrl, '/oauth/token', {
    grant_type: 'refresh_token',
    client_id: p.clientId,
    refresh_token: p.refreshToken,
    scope: p.scope,
  });
}

export async function apiGet(baseUrl: string, path: string, token: string, headers: Record<string, string> = {}) {
  const res = await fetch(baseUrl + path, { headers: { Authorization: `Bearer ${token}`, ...headers } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

/** One signed-in user's token for a client, through the real flow. */
export async function tokenFor(
  baseUrl: string,
  o: {
    clientId: string;
    redirectUri: string;
    email: string;
    scope?: string;
    access?: 'read' | 'full';
    workspace?: string;
    project?: string;
  },
) {
  const { verifier, challenge } = pkce();
  const { redirect } = await authorizeCode(baseUrl, { ...o, challenge, scope: o.scope ?? 'read write offline_access' });
  const code = redirect.searchParams.get('code');
  if (!code) throw new Error(`no code: ${redirect}`);
  const res = await exchangeCode(baseUrl, { clientId: o.clientId, code, redirectUri: o.redirectUri, verifier });
  if (res.status !== 200) throw new Error(`token exchange failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { access_token: string; refresh_token?: string; scope: string; expires_in: number; token_type: string };
}

/**
 * A token of `email` for a newly registered public client (an agent), through registration,
 * authorize, sign-in, consent and code exchange; with the client's id.
 */
export async function agentToken(
  apiUrl: string,
  o: { email: string; scope: string; access?: 'read' | 'full'; project?: string; workspace?: string },
) {
  const redirectUri = 'http://127.0.0.1:9/callback';
  const reg = await register(apiUrl, {
    client_name: `Test agent ${randomBase62(4)}`,
    redirect_uris: [redirectUri],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    scope: o.scope,
  });
  if (reg.status !== 201) throw new Error(`client registration failed: ${reg.status} ${JSON.stringify(reg.body)}`);
  const clientId = reg.body.client_id as string;
  const token = await tokenFor(apiUrl, { ...o, clientId, redirectUri });
  return { ...token, clientId };
}

/** An OAuth access token of a new `role` member of the workspace (default Admin, scope `read write webhooks:manage`). */
export async function oauthToken(apiUrl: string, workspaceId: string, opts: { role?: string; scope?: string } = {}): Promise<string> {
  const user = await member(workspaceId, opts.role ?? 'Admin');
  const token = await agentToken(apiUrl, {
    email: user.email,
    scope: opts.scope ?? 'read write webhooks:manage',
    access: 'full',
    workspace: workspaceId,
  });
  return token.access_token;
}
