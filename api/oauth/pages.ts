import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { documentHost } from './clientDocuments';
import type { ClientRow } from './clients';
import { isWriteSide } from './scopes';

// Server-rendered pages of the authorization endpoint: sign-in, consent, welcome back, error.
// Every interpolated value goes through `esc`. The pages carry no script at all.

export function esc(value: unknown): string {
  return String(value ?? '').replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`);
}

const CSS = `
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f3f4f6;color:#111827}
main{max-width:460px;margin:48px auto;padding:28px;background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:20px;margin:0 0 4px}p{margin:8px 0}.muted{color:#6b7280;font-size:13px}
.client{display:flex;gap:12px;align-items:center;margin-bottom:16px}.client img{width:48px;height:48px;border-radius:8px;object-fit:cover}
.badge{display:inline-block;font-size:12px;padding:1px 8px;border-radius:999px;margin-left:6px;vertical-align:middle}
.unverified{background:#fef3c7;color:#92400e}.verified{background:#d1fae5;color:#065f46}
label{display:block;font-weight:600;margin:14px 0 4px}input[type=email],input[type=password],select{width:100%;padding:9px;border:1px solid #d1d5db;border-radius:8px;font:inherit}
fieldset{border:1px solid #e5e7eb;border-radius:8px;margin:14px 0;padding:10px 14px}legend{font-weight:600;padding:0 4px}
fieldset label{font-weight:400;margin:6px 0}fieldset ul{margin:4px 0 8px 24px;padding:0;color:#4b5563;font-size:13px}
.row{display:flex;gap:8px;align-items:flex-end}.row select{flex:1}
.actions{display:flex;gap:10px;margin-top:20px}button{flex:1;padding:10px;border-radius:8px;border:1px solid #d1d5db;background:#fff;font:inherit;font-weight:600;cursor:pointer}
button.primary{background:#1d4ed8;border-color:#1d4ed8;color:#fff}button.small{flex:0 0 auto;padding:9px 12px}
.error{background:#fee2e2;color:#991b1b;padding:8px 12px;border-radius:8px}.link{background:none;border:0;color:#1d4ed8;padding:0;font-weight:400;text-decoration:underline}
`;

/**
 * The consent screen must not be embeddable (spec 5.3.2; RFC 6749 10.13 clickjacking):
 * frame-ancestors and X-Frame-Options for old browsers. form-action lists the one place a form
 * may lead, the redirect target included because the approval answers with a redirect there.
 */
export function sendPage(ctx: Context, status: number, title: string, body: string, opts: { formTarget?: string } = {}): void {
  const nonce = randomBytes(16).toString('base64');
  const formAction = opts.formTarget ? `'self' ${opts.formTarget}` : "'none'";
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'nonce-${nonce}'; img-src https: data:; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
  );
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.body =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${esc(title)}</title><style nonce="${nonce}">${CSS}</style></head><body><main>${body}</main></body></html>`;
}

/** A CSP source expression for the redirect target: its origin, or its scheme for a native app. */
export function cspSourceFor(uri: string): string {
  const u = new URL(uri);
  return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : u.protocol;
}

/** RFC 6749 4.1.2.1: a request that cannot be trusted to redirect is answered here; `oauthName` says which error it is. */
export function errorPage(ctx: Context, title: string, message: string, oauthName: string | null = null): void {
  sendPage(
    ctx,
    400,
    title,
    `<h1>${esc(title)}</h1><p>${esc(message)}</p>` +
      (oauthName ? `<p class="muted">Error: <code>${esc(oauthName)}</code></p>` : '') +
      `<p class="muted">You can close this window and start again from the application.</p>`,
  );
}

const SCOPE_LABELS: Record<string, string> = {
  'workspace:read': 'See the workspace, its plan and its team',
  'projects:read': 'See projects and their connection status',
  'notes:read': 'Read notes and sources',
  'notes:write': 'Create and edit notes',
  'posts:read': 'Read posts and the calendar',
  'posts:write': 'Create, edit and schedule posts',
  'posts:generate': 'Generate posts with AI (uses your AI budget)',
  'posts:publish': 'Publish posts',
  'sources:read': 'Read sources',
  'sources:write': 'Add sources and uploads',
  'knowledge:read': 'Read the knowledge base',
  'knowledge:write': 'Add to the knowledge base',
  'jobs:read': 'See background jobs',
  'jobs:cancel': 'Cancel background jobs',
  'analytics:read': 'Read analytics',
  'media:read': 'Read the media library',
  'ideas:write': 'Edit ideas',
  'settings:write': 'Change settings',
  'webhooks:manage': 'Manage webhook endpoints',
  offline_access: 'Stay connected when you are not using it (refresh tokens)',
};

export function scopeLabel(scope: string): string {
  if (SCOPE_LABELS[scope]) return SCOPE_LABELS[scope];
  if (scope.endsWith(':destroy')) return `Delete ${scope.split(':')[0]} permanently`;
  return scope;
}

function scopeList(scopes: readonly string[]): string {
  if (scopes.length === 0) return '<ul><li>Only identify the workspace</li></ul>';
  return `<ul>${scopes.map((s) => `<li>${esc(scopeLabel(s))} <span class="muted">(${esc(s)})</span></li>`).join('')}</ul>`;
}

export interface ClientView {
  client: ClientRow;
  redirectHost: string;
}

function clientHeader(v: ClientView): string {
  const c = v.client;
  const name = c.client_name || 'An unnamed application';
  const logo = c.logo_uri && c.logo_uri.startsWith('https://') ? `<img src="${esc(c.logo_uri)}" alt="">` : '';
  const badge = c.trusted
    ? '<span class="badge verified">Verified</span>'
    : `<span class="badge unverified" title="${c.metadata_url ? 'Described by its own metadata document' : 'Registered dynamically'}; the service has not reviewed this application">Unverified</span>`;
  const site = c.client_uri ? ` &middot; <span class="muted">${esc(c.client_uri)}</span>` : '';
  // draft-ietf-oauth-client-id-metadata-document 8.5: the host of the client_id beside the
  // name the document gives itself, which anyone can copy; the host is what the user can check.
  const from = c.metadata_url ? ` <span class="muted client-host">from <strong>${esc(documentHost(c.metadata_url))}</strong></span>` : '';
  return (
    `<div class="client">${logo}<div><h1>${esc(name)}${from}${badge}</h1>` +
    `<div class="muted">Will return you to <strong>${esc(v.redirectHost)}</strong>${site}</div></div></div>`
  );
}

export function loginPage(v: ClientView & { action: string; csrf: string; email?: string; error?: string }): string {
  return (
    `${clientHeader(v)}<p>Sign in to let ${esc(v.client.client_name || 'this application')} use your workspace.</p>` +
    (v.error ? `<p class="error" role="alert">${esc(v.error)}</p>` : '') +
    `<form method="post" action="${esc(v.action)}"><input type="hidden" name="csrf" value="${esc(v.csrf)}">` +
    `<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${esc(v.email ?? '')}">` +
    `<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>` +
    `<div class="actions"><button class="primary" type="submit">Sign in</button></div></form>`
  );
}

export interface WorkspaceOption {
  id: string;
  name: string;
  reach: string;
  apiAccess: boolean;
}

export interface ConsentView extends ClientView {
  uid: string;
  csrf: string;
  userEmail: string;
  requested: string[];
  workspaces: WorkspaceOption[];
  workspaceId: string | null;
  projects: Array<{ id: string; name: string }>;
  projectId: string | null;
  accessLevel: 'read' | 'full';
  error?: string;
}

function signOutForm(uid: string, csrf: string, email: string): string {
  return (
    `<form method="post" action="/oauth/interaction/${esc(uid)}/logout" class="muted">Signed in as <strong>${esc(email)}</strong>. ` +
    `<input type="hidden" name="csrf" value="${esc(csrf)}"><button class="link" type="submit">Not you? Sign out</button></form>`
  );
}

export function consentPage(v: ConsentView): string {
  const base = `/oauth/interaction/${esc(v.uid)}`;
  const readScopes = v.requested.filter((s) => !isWriteSide(s));
  const locked = readScopes.length === v.requested.length;
  let html = clientHeader(v) + signOutForm(v.uid, v.csrf, v.userEmail);
  if (v.error) html += `<p class="error" role="alert">${esc(v.error)}</p>`;

  if (v.workspaces.length === 0) {
    return (
      html +
      `<p>Your account does not belong to any workspace, so there is nothing to share.</p>` +
      `<form method="post" action="${base}/confirm"><input type="hidden" name="csrf" value="${esc(v.csrf)}">` +
      `<div class="actions"><button type="submit" name="decision" value="deny">Cancel</button></div></form>`
    );
  }

  const wsOptions = v.workspaces
    .map(
      (w) =>
        `<option value="${esc(w.id)}"${w.id === v.workspaceId ? ' selected' : ''}>${esc(w.name || w.id)}` +
        `${w.reach === 'agency_owner' ? ' (agency client)' : ''}${w.apiAccess ? '' : ' (plan without API access)'}</option>`,
    )
    .join('');
  // Picking another workspace reloads the page with its projects (a GET that changes nothing).
  if (v.workspaces.length > 1) {
    html +=
      `<form method="get" action="${base}"><label for="ws">Workspace</label><div class="row"><select id="ws" name="workspace">${wsOptions}</select>` +
      `<button class="small" type="submit">Show projects</button></div></form>`;
  } else {
    html += `<p>Workspace: <strong>${esc(v.workspaces[0]!.name || v.workspaces[0]!.id)}</strong></p>`;
  }

  html +=
    `<form method="post" action="${base}/confirm"><input type="hidden" name="csrf" value="${esc(v.csrf)}">` +
    `<input type="hidden" name="workspace" value="${esc(v.workspaceId ?? '')}">`;
  if (v.projects.length > 1) {
    html +=
      `<label for="project">Default project</label><select id="project" name="project">` +
      v.projects.map((p) => `<option value="${esc(p.id)}"${p.id === v.projectId ? ' selected' : ''}>${esc(p.name)}</option>`).join('') +
      `<option value=""${v.projectId === null ? ' selected' : ''}>No default project</option></select>`;
  } else if (v.projects.length === 1) {
    html += `<p>Default project: <strong>${esc(v.projects[0]!.name)}</strong></p>`;
  }

  html +=
    `<fieldset><legend>Access</legend>` +
    `<label><input type="radio" name="access" value="read"${v.accessLevel === 'read' || locked ? ' checked' : ''}> Read-only</label>${scopeList(readScopes)}` +
    (locked
      ? `<p class="muted">This application asks for nothing beyond reading, so only Read-only can be granted.</p>`
      : `<label><input type="radio" name="access" value="full"${v.accessLevel === 'full' ? ' checked' : ''}> Full access</label>${scopeList(v.requested)}`) +
    `</fieldset>` +
    `<div class="actions"><button type="submit" name="decision" value="deny">Deny</button>` +
    `<button class="primary" type="submit" name="decision" value="approve">Allow</button></div></form>`;
  return html;
}

export interface WelcomeBackView extends ClientView {
  uid: string;
  csrf: string;
  userEmail: string;
  userName: string;
  workspaceName: string;
  projectName: string | null;
  accessLevel: 'read' | 'full';
  scopes: string[];
}

/** spec 5.3.2: a visible page, never a silent redirect; continuing is still a POST with a CSRF token. */
export function welcomeBackPage(v: WelcomeBackView): string {
  const base = `/oauth/interaction/${esc(v.uid)}`;
  return (
    clientHeader(v) +
    signOutForm(v.uid, v.csrf, v.userEmail) +
    `<h1>Welcome back${v.userName ? `, ${esc(v.userName)}` : ''}</h1>` +
    `<p>You already allowed ${esc(v.client.client_name || 'this application')} <strong>${v.accessLevel === 'full' ? 'Full access' : 'Read-only'}</strong> access to ` +
    `<strong>${esc(v.workspaceName)}</strong>${v.projectName ? `, default project <strong>${esc(v.projectName)}</strong>` : ''}.</p>` +
    scopeList(v.scopes) +
    `<form method="post" action="${base}/confirm"><input type="hidden" name="csrf" value="${esc(v.csrf)}"><input type="hidden" name="mode" value="welcome_back">` +
    `<div class="actions"><button type="submit" name="decision" value="deny">Deny</button>` +
    `<button class="primary" type="submit" name="decision" value="approve">Continue</button></div></form>` +
    `<p class="muted"><a href="${base}?review=1">Review the choices instead</a></p>`
  );
}
