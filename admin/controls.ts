import { ENFORCEMENTS, POOL_KEY, type Enforcement } from '../lib/spend/meters';
import { db } from '../lib/db';
import { AiBudget, Membership, Project } from '../lib/models';
import { presentOverride, storedOverride, type LimitOverride } from '../lib/limits';
import { newId, randomBase62 } from '../lib/ids';
import { roleSlug } from '../lib/roles';
import { AdminError, findUser, getWorkspace, listMembers } from './provision';

// Operator actions on a running service (issue 12, "Operator commands"): what a dashboard would
// offer support staff. Each returns the state after the change, which bin/admin prints.

// --- Members -----------------------------------------------------------------------------------

/**
 * Ends a user's membership (and with it their project assignments). Their OAuth tokens stop
 * reaching the workspace once the per-process reach cache turns over (spec 5.4/5.5: within a
 * minute); API keys belong to the workspace and are unaffected.
 */
export async function removeMember(input: { workspaceId: string; user: string }) {
  await getWorkspace(input.workspaceId);
  const user = await findUser(input.user);
  const removed = await db().transaction(async (trx) => {
    const m = await Membership.knexForWorkspace(input.workspaceId, trx).where({ user_id: user.id }).first('id', 'role');
    if (!m) return null;
    await trx('membership_projects').where({ membership_id: m.id }).delete();
    await trx('memberships').where({ id: m.id }).delete();
    return m as { id: string; role: string };
  });
  if (!removed) throw new AdminError(`${user.email} is not a member of workspace ${input.workspaceId}`);
  return { workspaceId: input.workspaceId, userId: user.id, email: user.email as string, role: removed.role, removed: true };
}

export interface RosterEntry {
  email: string;
  name?: string;
  role?: string;
}

/** One roster line: `email[,role[,name]]`; blank lines and `#` comments are skipped. */
export function parseRoster(text: string): RosterEntry[] {
  const entries: RosterEntry[] = [];
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const [email = '', role, ...name] = line.split(',').map((s) => s.trim());
    if (i === 0 && email.toLowerCase() === 'email') continue; // a CSV header
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new AdminError(`line ${i + 1}: "${email}" is not an email address`);
    entries.push({ email: email.toLowerCase(), role: role || undefined, name: name.join(',') || undefined });
  }
  return entries;
}

/**
 * Adds many members at once: users are created when their email is new (without a password),
 * memberships inserted or re-roled, all in one transaction of a few multi-row statements, so a
 * 100-member roster takes well under a second of database time.
 */
export async function addMembers(input: { workspaceId: string; entries: RosterEntry[]; defaultRole: string }) {
  await getWorkspace(input.workspaceId);
  if (input.entries.length === 0) throw new AdminError('no members to add');
  const rows = input.entries.map((e) => {
    const role = roleSlug(e.role ?? input.defaultRole);
    if (!role)
      throw new AdminError(`unknown role "${e.role ?? input.defaultRole}" for ${e.email}; use Admin, Member, Client or a legacy slug`);
    return { email: e.email.toLowerCase(), name: e.name ?? '', role };
  });
  const byEmail = new Map(rows.map((r) => [r.email, r]));
  if (byEmail.size !== rows.length) throw new AdminError('the roster names an email twice');
  const emails = [...byEmail.keys()];
  const result = await db().transaction(async (trx) => {
    // Emails are unique case-insensitively; lock out a concurrent creation of the same ones.
    await trx.raw('lock table users in share row exclusive mode');
    const existing = await trx('users').whereRaw('lower(email) = any(?)', [emails]).select('id', db().raw('lower(email) as email'));
    const known = new Map<string, string>(existing.map((u: { id: string; email: string }) => [u.email, u.id]));
    const fresh = emails
      .filter((e) => !known.has(e))
      .map((email) => ({ id: newId('user'), email, name: byEmail.get(email)!.name, password_hash: null }));
    for (let i = 0; i < fresh.length; i += 1000) await trx('users').insert(fresh.slice(i, i + 1000));
    for (const u of fresh) known.set(u.email, u.id);
    const memberships = rows.map((r) => ({
      id: newId('membership'),
      workspace_id: input.workspaceId,
      user_id: known.get(r.email)!,
      role: r.role,
    }));
    for (let i = 0; i < memberships.length; i += 1000) {
      await trx('memberships')
        .insert(memberships.slice(i, i + 1000))
        .onConflict(['workspace_id', 'user_id'])
        .merge(['role']);
    }
    return { createdUsers: fresh.length };
  });
  const members = await listMembers(input.workspaceId);
  const wanted = new Set(emails);
  return {
    workspaceId: input.workspaceId,
    added: rows.length,
    createdUsers: result.createdUsers,
    members: members.filter((m) => wanted.has(m.email.toLowerCase())),
  };
}

// --- Projects ----------------------------------------------------------------------------------

/**
 * Archives a project: the API stops returning it (spec 2.5 lists ACTIVE projects only) and
 * nothing new can be written to it. A project with scheduled posts is refused, so archiving
 * never silently drops or publishes a post; unschedule or delete those first.
 */
export async function archiveProject(input: { workspaceId: string; projectId: string }) {
  return db().transaction(async (trx) => {
    const p = await Project.knexForWorkspace(input.workspaceId, trx).where({ id: input.projectId }).forUpdate().first('id', 'status');
    if (!p) throw new AdminError(`no project ${input.projectId} in workspace ${input.workspaceId}`);
    if (p.status === 'ARCHIVED') return { id: p.id as string, workspaceId: input.workspaceId, status: 'ARCHIVED', alreadyArchived: true };
    const scheduled = await trx('posts')
      .where({ project_id: p.id, status: 'scheduled' })
      .whereNull('deleted_at')
      .count<{ n: string }[]>({ n: '*' });
    const n = Number(scheduled[0]?.n ?? 0);
    if (n > 0) throw new AdminError(`project ${p.id} has ${n} scheduled post(s); unschedule or delete them first`);
    await trx('projects').where({ id: p.id }).update({ status: 'ARCHIVED', updated_at: trx.fn.now() });
    return { id: p.id as string, workspaceId: input.workspaceId, status: 'ARCHIVED', alreadyArchived: false };
  });
}

async function connectionOfProject(workspaceId: string, projectId: string): Promise<string> {
  const p = await Project.knexForWorkspace(workspaceId).where({ id: projectId }).first('connection_id');
  if (!p) throw new AdminError(`no project ${projectId} in workspace ${workspaceId}`);
  if (!p.connection_id) throw new AdminError(`project ${projectId} has no connection (a company page not linked to an account)`);
  return p.connection_id as string;
}

const CONNECTION_COLUMNS = [
  'id',
  'connection_status',
  'consecutive_failures',
  'access_token_expires_at',
  'last_validated_at',
  'last_failure_at',
  'last_error',
  'revoked_at',
];

/**
 * `revoked`: the network withdrew the authorization (spec 2.6: state revoked, cannot publish
 * until reconnected). `clear-tokens`: the account holds no token (state disconnected).
 */
export async function setConnectionState(input: { workspaceId: string; projectId: string; state: 'revoked' | 'clear-tokens' }) {
  const id = await connectionOfProject(input.workspaceId, input.projectId);
  const change =
    input.state === 'revoked'
      ? { connection_status: 'REVOKED', revoked_at: db().fn.now(), last_error: 'revoked by an operator' }
      : { access_token_enc: null, refresh_token_enc: null, access_token_expires_at: null, refresh_token_expires_at: null };
  await db()('network_connections')
    .where({ id })
    .update({ ...change, updated_at: db().fn.now() });
  return db()('network_connections').where({ id }).first(CONNECTION_COLUMNS);
}

/**
 * Runs the project's connection check now: signals its health workflow (starting it when it
 * does not run) with a request id, waits until its lastCheck query reports the check made for
 * that id, and returns that outcome with the connection row it left.
 */
export async function checkConnectionNow(input: { workspaceId: string; projectId: string; timeoutMs: number }) {
  const id = await connectionOfProject(input.workspaceId, input.projectId);
  const [{ temporalClient }, { config }, { requestHealthCheck }, { lastCheckQuery }] = await Promise.all([
    import('../lib/temporal/client'),
    import('../lib/config'),
    import('../lib/temporal/start/connectionHealth'),
    import('../lib/temporal/contracts/connectionHealth'),
  ]);
  const client = await temporalClient();
  const startedAt = Date.now();
  const requestId = `admin_${randomBase62(12)}`;
  const workflowId = await requestHealthCheck(client, { id: input.projectId, workspace_id: input.workspaceId }, requestId);
  const handle = client.workflow.getHandle(workflowId);
  const deadline = startedAt + input.timeoutMs;
  for (;;) {
    // A query waits for a worker to answer it; the deadline bounds it, so a queue no worker
    // serves fails at --timeout-ms instead of at the server's own query timeout.
    const last = await client.withDeadline(Math.max(deadline, Date.now() + 250), () => handle.query(lastCheckQuery)).catch(() => null);
    if (last?.requestId === requestId) {
      const connection = await db()('network_connections').where({ id }).first(CONNECTION_COLUMNS);
      return {
        projectId: input.projectId,
        workflowId,
        result: last.ok === null ? 'skipped' : last.ok ? 'ok' : 'failed',
        ...last,
        connection,
      };
    }
    if (Date.now() >= deadline) {
      throw new AdminError(`no check result within ${input.timeoutMs} ms; is a worker running on task queue ${config.temporalTaskQueue}?`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

// --- Workspace settings ------------------------------------------------------------------------

/** `weeklyBudgetCents`: a number, 'unlimited', null for the plan's budget, undefined to leave it. */
export async function setAiBudget(input: { workspaceId: string; weeklyBudgetCents?: LimitOverride; enforcement?: string }) {
  const change: Record<string, unknown> = {};
  if (input.weeklyBudgetCents !== undefined) change.weekly_ai_budget_cents = storedOverride(input.weeklyBudgetCents);
  if (input.enforcement !== undefined) {
    if (!(ENFORCEMENTS as readonly string[]).includes(input.enforcement))
      throw new AdminError(`enforcement must be one of ${ENFORCEMENTS.join(', ')}`);
    change.ai_enforcement = input.enforcement as Enforcement;
  }
  return updateWorkspace(input.workspaceId, change);
}

/**
 * The weekly AI budget of one target (spec 2.16): a personal-brand or amplifier project, or the
 * workspace pool company pages draw on. `weeklyBudgetCents` null removes the target's own budget
 * (it then has the workspace's, else the plan's).
 */
export async function setTargetBudget(input: { workspaceId: string; projectId?: string; weeklyBudgetCents: LimitOverride }) {
  await getWorkspace(input.workspaceId);
  let key = POOL_KEY;
  if (input.projectId) {
    const p = await Project.knexForWorkspace(input.workspaceId).where({ id: input.projectId }).first('id', 'type');
    if (!p) throw new AdminError(`no project ${input.projectId} in workspace ${input.workspaceId}`);
    if (p.type === 'COMPANY_PAGE')
      throw new AdminError('a company page has no budget of its own: it draws on the workspace pool (use --pool)');
    key = p.id;
  }
  if (input.weeklyBudgetCents === null) await AiBudget.forWorkspace(input.workspaceId).where({ budget_key: key }).delete();
  else {
    await db()('ai_budgets')
      .insert({
        workspace_id: input.workspaceId,
        budget_key: key,
        weekly_budget_cents: storedOverride(input.weeklyBudgetCents),
        updated_at: db().fn.now(),
      })
      .onConflict(['workspace_id', 'budget_key'])
      .merge();
  }
  return budgets(input.workspaceId);
}

/** The workspace's budget settings and what each target has in force this week. */
export async function budgets(workspaceId: string) {
  const { loadAiLimits, periodsAt, weekUsedCents } = await import('../lib/spend/meters');
  const w = await getWorkspace(workspaceId);
  const week = periodsAt(new Date()).week;
  const projects = await Project.knexForWorkspace(workspaceId)
    .whereNot('type', 'COMPANY_PAGE')
    .whereNot('status', 'ARCHIVED')
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select('id', 'display_name');
  const own = new Map<string, number>(
    (await AiBudget.knexForWorkspace(workspaceId).select('budget_key', 'weekly_budget_cents')).map(
      (r: { budget_key: string; weekly_budget_cents: number }) => [r.budget_key, r.weekly_budget_cents],
    ),
  );
  const targets = [
    { key: POOL_KEY, scope: 'ai_workspace_pool' as const, name: 'workspace pool' },
    ...projects.map((p: { id: string; display_name: string }) => ({ key: p.id, scope: 'ai_project' as const, name: p.display_name })),
  ];
  const rows = [];
  for (const t of targets) {
    const limits = await loadAiLimits(db(), workspaceId, t);
    rows.push({
      target: t.key === POOL_KEY ? 'pool' : t.key,
      name: t.name,
      ownBudgetCents: presentOverride(own.get(t.key)),
      weeklyBudgetCents: limits.weeklyBudgetCents,
      usedCents: await weekUsedCents(db(), workspaceId, t.key, week),
    });
  }
  const limits = await loadAiLimits(db(), workspaceId);
  return {
    workspaceId,
    plan: limits.plan,
    enforcement: limits.enforcement,
    week,
    workspaceWeeklyBudgetCents: presentOverride(w.weekly_ai_budget_cents),
    dailySpendCapCents: limits.dailyCapCents,
    targets: rows,
  };
}

// --- Job spend settlement ----------------------------------------------------------------------

/**
 * docs/generation.md "Spend and budgets": final jobs whose reservation has not yet been replaced
 * by their cost (the process that finished them died before the settlement statement). The
 * reconciler settles them after 30 s; until then each still holds its reservation on the meters.
 */
export async function unsettledJobs(input: { workspaceId?: string; limit: number }) {
  if (input.workspaceId !== undefined) await getWorkspace(input.workspaceId);
  const { listUnsettledJobs } = await import('../lib/spend/settlement');
  return listUnsettledJobs(db(), { workspaceId: input.workspaceId, limit: input.limit });
}

/** Rows settled per pass, as the reconciler's pass takes them. */
const SETTLE_BATCH = 500;

/**
 * Settles now, through the reconciler's own pass (settleUnsettledJobs) without its 30 s grace,
 * the unsettled final jobs (of one workspace, at most `limit`). Idempotent: each settlement is
 * a claim on the job row, so a job settled meanwhile by its finisher or the reconciler is
 * skipped, and a second run settles nothing.
 */
export async function settleUnsettledSpend(input: { workspaceId?: string; limit?: number }) {
  if (input.workspaceId !== undefined) await getWorkspace(input.workspaceId);
  const { listUnsettledJobs, settleUnsettledJobs } = await import('../lib/spend/settlement');
  let settled = 0;
  for (;;) {
    const want = Math.min(SETTLE_BATCH, (input.limit ?? Infinity) - settled);
    if (want <= 0) break;
    const n = await settleUnsettledJobs(db(), 0, { workspaceId: input.workspaceId, limit: want, by: 'operator' });
    settled += n;
    // A short pass found no more (or lost some to a concurrent settlement, which the next run or
    // the reconciler sees).
    if (n < want) break;
  }
  const left = await listUnsettledJobs(db(), { workspaceId: input.workspaceId, limit: 0 });
  return { workspaceId: input.workspaceId ?? null, settled, remaining: left.total, remainingReservedCents: left.reservedCents };
}

export async function setSpendCap(input: { workspaceId: string; dailyCapCents: LimitOverride }) {
  return updateWorkspace(input.workspaceId, { daily_spend_cap_cents: storedOverride(input.dailyCapCents) });
}

/**
 * Overrides the plan's storage limits of one workspace (spec 2.16 storage meters; imports beyond
 * them are refused, docs/media.md "Storage limits"). Each: a number, 'unlimited', null for the
 * plan's again, undefined to leave it.
 */
export async function setStorageLimits(input: { workspaceId: string; bytes?: LimitOverride; assets?: LimitOverride }) {
  const change: Record<string, unknown> = {};
  if (input.bytes !== undefined) change.storage_limit_bytes = storedOverride(input.bytes);
  if (input.assets !== undefined) change.asset_limit = storedOverride(input.assets);
  const w = await updateWorkspace(input.workspaceId, change);
  const { storageMeters, storageUsed, workspaceStorageLimits } = await import('../lib/media/assets');
  return {
    workspaceId: input.workspaceId,
    storageLimitBytes: presentOverride(w.storage_limit_bytes),
    assetLimit: presentOverride(w.asset_limit),
    // What GET /v1/usage now shows (null = unlimited).
    storage: storageMeters(await storageUsed(input.workspaceId), await workspaceStorageLimits(input.workspaceId)),
  };
}

export async function setReviewGate(input: { workspaceId: string; required: boolean }) {
  return updateWorkspace(input.workspaceId, { require_review_workflow: input.required });
}

/** docs/review.md: the member who reviews posts moved to the review category (null: any admin decides). */
export async function setDefaultReviewer(input: { workspaceId: string; userId: string | null }) {
  if (input.userId !== null) {
    const m = await Membership.knexForWorkspace(input.workspaceId).where({ user_id: input.userId }).first('id');
    if (!m) throw new AdminError(`user ${input.userId} is not a member of workspace ${input.workspaceId}`);
  }
  return updateWorkspace(input.workspaceId, { default_reviewer_user_id: input.userId });
}

/** docs/engagement.md: the comments amplifiers post (null: the built-in list). */
export async function setEngagementComments(input: { workspaceId: string; comments: string[] | null }) {
  if (input.comments) {
    if (input.comments.length > 50) throw new AdminError('at most 50 engagement comments');
    for (const c of input.comments)
      if (!c.trim() || c.length > 1_000) throw new AdminError('each engagement comment must be 1 to 1,000 characters');
  }
  return updateWorkspace(input.workspaceId, { engagement_comments: input.comments === null ? null : JSON.stringify(input.comments) });
}

async function updateWorkspace(workspaceId: string, change: Record<string, unknown>) {
  const n = await db()('workspaces')
    .where({ id: workspaceId })
    .update({ ...change, updated_at: db().fn.now() });
  if (!n) throw new AdminError(`no workspace ${workspaceId}`);
  return db()('workspaces').where({ id: workspaceId }).first();
}

// --- OAuth -------------------------------------------------------------------------------------

/** A ready access token for a user, client and scope set (spec 5.3 rows, without the browser). */
export async function mintOAuthToken(input: {
  user: string;
  clientId: string;
  workspaceId?: string;
  projectId?: string;
  scopes: string[];
  expiresInSeconds?: number;
}) {
  const [{ ALL_SCOPES, expandScopes }, { mintAccessToken, OAuthAdminError }] = await Promise.all([
    import('../lib/scopes'),
    import('./oauth'),
  ]);
  const user = await findUser(input.user);
  const scopes = expandScopes(input.scopes);
  const unknown = scopes.filter((s) => !ALL_SCOPES.includes(s));
  if (unknown.length) throw new AdminError(`unknown scopes: ${unknown.join(', ')}`);
  if (!scopes.length) throw new AdminError('an access token needs at least one scope');
  let workspaceId = input.workspaceId;
  if (!workspaceId) {
    const first = await db()('memberships')
      .where({ user_id: user.id })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .first('workspace_id');
    if (!first) throw new AdminError(`${user.email} is a member of no workspace; give --workspace`);
    workspaceId = first.workspace_id as string;
  }
  // spec 5.5: a member of the workspace, or an owner of the agency that pays for it.
  const reach = await db()('workspaces as w')
    .where('w.id', workspaceId)
    .first(
      db().raw('exists (select 1 from memberships m where m.workspace_id = w.id and m.user_id = ?) as member', [user.id]),
      db().raw(
        'exists (select 1 from agency_owners ao where ao.agency_workspace_id = w.billing_workspace_id and ao.user_id = ?) as owner',
        [user.id],
      ),
    );
  if (!reach) throw new AdminError(`no workspace ${workspaceId}`);
  if (!reach.member && !reach.owner)
    throw new AdminError(`${user.email} does not reach workspace ${workspaceId} (not a member, not an owner of its agency)`);
  if (input.projectId) {
    const p = await Project.knexForWorkspace(workspaceId).where({ id: input.projectId }).first('id');
    if (!p) throw new AdminError(`no project ${input.projectId} in workspace ${workspaceId}`);
  }
  try {
    const token = await mintAccessToken({
      userId: user.id,
      clientId: input.clientId,
      workspaceId,
      defaultProjectId: input.projectId ?? null,
      scopes,
      accessLevel: scopes.every((s) => s.endsWith(':read')) ? 'read' : 'full',
      expiresInSeconds: input.expiresInSeconds,
    });
    return { ...token, userId: user.id as string, clientId: input.clientId, workspaceId, defaultProjectId: input.projectId ?? null };
  } catch (err) {
    throw err instanceof OAuthAdminError ? new AdminError(err.message) : err;
  }
}
