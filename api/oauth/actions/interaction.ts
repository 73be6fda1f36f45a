import type { Context, Next } from 'koa';
import { planLimits } from '../../../lib/config';
import { db } from '../../../lib/db';
import { hashPassword, verifyPassword } from '../../../lib/password';
import { consume } from '../../rateLimit';
import { findClient, redirectHost, storeDocumentClient, type ClientRow } from '../clients';
import { AccessDenied, AuthorizationPageError } from '../errors';
import { issueCode, liveGrant, saveConsent, type GrantRow } from '../grants';
import { consentPage, cspSourceFor, loginPage, sendPage, welcomeBackPage, type ConsentView } from '../pages';
import { pickableProjects, reachableWorkspaces, workspaceAccess, type ReachableWorkspace } from '../reach';
import { grantedScopes, hasWriteSide, sameScopeSet, type AccessLevel } from '../scopes';
import {
  csrfToken,
  csrfValid,
  currentSession,
  finishInteraction,
  loadInteraction,
  switchUser,
  type Interaction,
  type Session,
} from '../session';
import { browserErrors, redirectError, redirectToClient } from './respond';

// The pages behind /oauth/authorize (spec 5.3.2): sign in, consent or welcome back, then the
// redirect with a code (5.3.3). State-changing steps are POSTs carrying a CSRF token bound to
// the session and the interaction; the session cookie is SameSite=Lax.
//
//   GET  /oauth/interaction/:uid          sign-in, consent or welcome-back page
//   POST /oauth/interaction/:uid/login    email + password
//   POST /oauth/interaction/:uid/logout   "Not you?"
//   POST /oauth/interaction/:uid/confirm  approve (consent or welcome back) or deny

interface User {
  id: string;
  email: string;
  name: string;
}
interface InteractionState {
  ix: Interaction;
  session: Session;
  client: ClientRow;
  user?: User;
}
const it = (ctx: Context) => ctx.state.interaction as InteractionState;

const EXPIRED = new AuthorizationPageError(
  'This sign-in request has expired',
  'Authorization requests are valid for 15 minutes and only in the browser that started them.',
);

function form(ctx: Context): Record<string, string> {
  const body = ctx.state.body as Record<string, unknown> | undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body ?? {})) if (typeof v === 'string') out[k] = v;
  return out;
}

/** The interaction must exist and belong to this browser's session. */
async function loadRequest(ctx: Context, next: Next) {
  const ix = await loadInteraction(String(ctx.params.uid));
  if (!ix) throw EXPIRED;
  const session = await currentSession(ctx);
  if (!session || session.sid !== ix.sid) throw EXPIRED;
  const client = await findClient(ix.clientId, ctx.ip);
  if (!client) throw new AuthorizationPageError('Unknown application', 'The application that sent you here is no longer registered.');
  ctx.state.interaction = { ix, session, client } satisfies InteractionState;
  await next();
}

async function checkCsrf(ctx: Context, next: Next) {
  const { session, ix } = it(ctx);
  if (!csrfValid(session, ix.uid, form(ctx).csrf)) {
    throw new AuthorizationPageError(
      'This form has expired',
      'The page was open too long or was sent from somewhere else. Go back to the application and start again.',
    );
  }
  await next();
}

async function loadUser(ctx: Context, next: Next) {
  const state = it(ctx);
  if (state.session.userId) {
    state.user = (await db()('users').where({ id: state.session.userId }).first('id', 'email', 'name')) as User | undefined;
  }
  await next();
}

function requireUser(ctx: Context): User {
  const user = it(ctx).user;
  if (!user) throw new AuthorizationPageError('You are signed out', 'Sign in again from the application to continue.');
  return user;
}

function page(ctx: Context, status: number, title: string, body: string) {
  sendPage(ctx, status, title, body, { formTarget: cspSourceFor(it(ctx).ix.redirectUri) });
}

function clientView(state: InteractionState) {
  return { client: state.client, redirectHost: redirectHost(state.ix.redirectUri) };
}

function renderLogin(ctx: Context, status: number, extra: { email?: string; error?: string } = {}) {
  const state = it(ctx);
  page(
    ctx,
    status,
    'Sign in',
    loginPage({
      ...clientView(state),
      action: `/oauth/interaction/${state.ix.uid}/login`,
      csrf: csrfToken(state.session, state.ix.uid),
      ...extra,
    }),
  );
}

function rememberedGrant(grant: GrantRow | undefined, ix: Interaction, workspaces: ReachableWorkspace[]): GrantRow | undefined {
  if (!grant || !grant.remembered || ix.forceConsent) return undefined;
  if (!sameScopeSet(grant.requested_scopes, ix.requestedScopes)) return undefined;
  return workspaces.some((w) => w.id === grant.workspace_id) ? grant : undefined;
}

async function renderConsent(
  ctx: Context,
  status: number,
  picks: { workspaceId?: string; projectId?: string | null; accessLevel?: AccessLevel; error?: string },
) {
  const state = it(ctx);
  const user = requireUser(ctx);
  const workspaces = await reachableWorkspaces(user.id);
  const grant = await liveGrant(user.id, state.client.id);
  const reachable = (id: string | undefined) => (id && workspaces.some((w) => w.id === id) ? id : undefined);
  const workspaceId = reachable(picks.workspaceId) ?? reachable(grant?.workspace_id) ?? workspaces[0]?.id ?? null;
  const access = workspaceId ? await workspaceAccess(user.id, workspaceId) : null;
  const projects = access && workspaceId ? await pickableProjects(access, workspaceId) : [];
  const preferred =
    picks.projectId !== undefined ? picks.projectId : grant?.workspace_id === workspaceId ? grant?.default_project_id : undefined;
  const projectId = preferred === null ? null : (projects.find((p) => p.id === preferred)?.id ?? projects[0]?.id ?? null);
  const view: ConsentView = {
    ...clientView(state),
    uid: state.ix.uid,
    csrf: csrfToken(state.session, state.ix.uid),
    userEmail: user.email,
    requested: state.ix.requestedScopes,
    workspaces: workspaces.map((w) => ({ id: w.id, name: w.name, reach: w.reach, apiAccess: planLimits(w.plan).apiAccess })),
    workspaceId,
    projects,
    projectId,
    accessLevel: picks.accessLevel ?? grant?.access_level ?? 'read',
    error: picks.error,
  };
  page(ctx, status, 'Authorize access', consentPage(view));
}

// ---------------------------------------------------------------------------------------------
// GET /oauth/interaction/:uid

async function showPage(ctx: Context) {
  const state = it(ctx);
  if (!state.user) return renderLogin(ctx, 200);
  const query = ctx.query as Record<string, string | undefined>;
  if (!query.review && !query.workspace) {
    const workspaces = await reachableWorkspaces(state.user.id);
    const grant = rememberedGrant(await liveGrant(state.user.id, state.client.id), state.ix, workspaces);
    if (grant) {
      const workspace = workspaces.find((w) => w.id === grant.workspace_id)!;
      const access = await workspaceAccess(state.user.id, grant.workspace_id);
      const project = access
        ? (await pickableProjects(access, grant.workspace_id)).find((p) => p.id === grant.default_project_id)
        : undefined;
      return page(
        ctx,
        200,
        'Welcome back',
        welcomeBackPage({
          ...clientView(state),
          uid: state.ix.uid,
          csrf: csrfToken(state.session, state.ix.uid),
          userEmail: state.user.email,
          userName: state.user.name,
          workspaceName: workspace.name || workspace.id,
          projectName: project?.name ?? null,
          accessLevel: grant.access_level,
          scopes: grant.scopes,
        }),
      );
    }
  }
  await renderConsent(ctx, 200, { workspaceId: typeof query.workspace === 'string' ? query.workspace : undefined });
}

export const showInteraction = [browserErrors, loadRequest, loadUser, showPage];

// ---------------------------------------------------------------------------------------------
// POST /oauth/interaction/:uid/login

let dummyHash: Promise<string> | undefined;

async function signIn(ctx: Context) {
  const state = it(ctx);
  const { email = '', password = '' } = form(ctx);
  // Password guessing is slow per address and per account (scrypt also makes each try costly).
  const [byIp, byEmail] = await Promise.all([
    consume('unauthenticated', `oauth-login:${ctx.ip}`),
    consume('unauthenticated', `oauth-login-email:${email.toLowerCase()}`),
  ]);
  if (!byIp.allowed || !byEmail.allowed)
    return renderLogin(ctx, 429, { email, error: 'Too many sign-in attempts. Wait a minute and try again.' });
  const user = email ? await db()('users').whereRaw('lower(email) = ?', [email.toLowerCase()]).first('id', 'password_hash') : undefined;
  // Unknown accounts cost the same scrypt run as wrong passwords, so timing does not tell them apart.
  const ok = await verifyPassword(password, user?.password_hash ?? (await (dummyHash ??= hashPassword('not-a-password'))));
  if (!user || !user.password_hash || !ok)
    return renderLogin(ctx, 401, { email, error: 'That email and password do not match an account.' });
  await switchUser(ctx, state.session, user.id, state.ix);
  ctx.status = 303;
  ctx.redirect(`/oauth/interaction/${state.ix.uid}`);
}

export const loginAction = [browserErrors, loadRequest, checkCsrf, signIn];

// ---------------------------------------------------------------------------------------------
// POST /oauth/interaction/:uid/logout

async function signOut(ctx: Context) {
  const state = it(ctx);
  await switchUser(ctx, state.session, null, state.ix);
  ctx.status = 303;
  ctx.redirect(`/oauth/interaction/${state.ix.uid}`);
}

export const logoutAction = [browserErrors, loadRequest, checkCsrf, signOut];

// ---------------------------------------------------------------------------------------------
// POST /oauth/interaction/:uid/confirm

async function decide(ctx: Context, next: Next) {
  const { ix } = it(ctx);
  requireUser(ctx);
  const decision = form(ctx).decision;
  if (decision === 'deny') {
    await finishInteraction(ix.uid);
    // spec 5.3.3: a declined consent gives ?error=access_denied&state=<state>.
    return redirectError(ctx, { uri: ix.redirectUri, state: ix.state }, new AccessDenied());
  }
  if (decision !== 'approve') throw new AuthorizationPageError('Invalid form', 'Choose Allow or Deny.');
  await next();
}

interface Approval {
  workspaceId: string;
  projectId: string | null;
  accessLevel: AccessLevel;
}

/** The welcome-back page approves the remembered choices again, if they still hold. */
async function welcomeBackChoices(ctx: Context, user: User): Promise<Approval | null> {
  const { ix, client } = it(ctx);
  const grant = rememberedGrant(await liveGrant(user.id, client.id), ix, await reachableWorkspaces(user.id));
  if (!grant) return null;
  return { workspaceId: grant.workspace_id, projectId: grant.default_project_id, accessLevel: grant.access_level };
}

/** spec 5.3.2: a reachable workspace, a default project it shows this user, one access level. */
async function formChoices(ctx: Context, user: User): Promise<Approval | null> {
  const { ix } = it(ctx);
  const f = form(ctx);
  const accessLevel: AccessLevel = f.access === 'full' && hasWriteSide(ix.requestedScopes) ? 'full' : 'read';
  const access = f.workspace ? await workspaceAccess(user.id, f.workspace) : null;
  if (!access) {
    await renderConsent(ctx, 400, { accessLevel, error: 'Choose one of your workspaces.' });
    return null;
  }
  const projects = await pickableProjects(access, f.workspace!);
  let projectId: string | null = projects.length === 1 ? projects[0]!.id : null;
  if (projects.length > 1 && f.project) {
    if (!projects.some((p) => p.id === f.project)) {
      await renderConsent(ctx, 400, { workspaceId: f.workspace, accessLevel, error: 'Choose a project of this workspace.' });
      return null;
    }
    projectId = f.project;
  }
  return { workspaceId: f.workspace!, projectId, accessLevel };
}

async function approve(ctx: Context) {
  const { ix, client } = it(ctx);
  const user = requireUser(ctx);
  const choices = form(ctx).mode === 'welcome_back' ? await welcomeBackChoices(ctx, user) : await formChoices(ctx, user);
  if (!choices) {
    // The remembered approval no longer holds (revoked, forgotten, workspace gone): ask again.
    if (ctx.body === undefined)
      await renderConsent(ctx, 409, { error: 'Your earlier approval no longer applies; review the choices below.' });
    return;
  }
  if (!(await finishInteraction(ix.uid)))
    throw new AuthorizationPageError('Already answered', 'This request was already approved or denied. Return to the application.');
  await storeDocumentClient(client);
  const grant = await saveConsent({
    userId: user.id,
    clientId: client.id,
    workspaceId: choices.workspaceId,
    defaultProjectId: choices.projectId,
    accessLevel: choices.accessLevel,
    requestedScopes: ix.requestedScopes,
    scopes: grantedScopes(ix.requestedScopes, choices.accessLevel),
  });
  const code = await issueCode(grant, ix.redirectUri, ix.codeChallenge, ix.resource ?? null);
  redirectToClient(ctx, ix.redirectUri, { code, state: ix.state });
}

export const confirmAction = [browserErrors, loadRequest, checkCsrf, loadUser, decide, approve];
