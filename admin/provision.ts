import type { Knex } from 'knex';
import { createApiKey } from '../lib/auth/apiKeys';
import { publishAuthInvalidation } from '../lib/auth/invalidation';
import { grantAgencyOwnership, listGrants, OAuthAdminError, revokeAgencyOwnership, revokeGrants } from './oauth';
import { PLAN_NAMES } from '../lib/config';
import { PROJECT_CONNECTION_COLUMNS } from '../lib/connectionState';
import { encrypt, randomSecret } from '../lib/crypto';
import { db } from '../lib/db';
import { newId } from '../lib/ids';
import { ApiKey, Membership, Project } from '../lib/models';
import { hashPassword } from '../lib/password';
import { createDefaultStatuses } from '../lib/posts/statuses';
import { roleSlug } from '../lib/roles';
import { ALL_SCOPES, expandScopes, OAUTH_ONLY_SCOPES } from '../lib/scopes';
import { isValidTimeZone } from '../lib/time';
import type { ConnectionPreset } from './presets';

// Operator provisioning (there is no dashboard here): used by bin/admin, the seed script and
// test factories, so all three create data the same way.

export class AdminError extends Error {}

export async function createWorkspace(input: {
  name: string;
  plan: string;
  features?: Record<string, boolean>;
  requireReviewWorkflow?: boolean;
  billingWorkspaceId?: string | null;
  aiEnforcement?: string;
}) {
  const plan = input.plan.toUpperCase();
  if (!(PLAN_NAMES as readonly string[]).includes(plan))
    throw new AdminError(`unknown plan "${input.plan}"; one of ${PLAN_NAMES.join(', ')}`);
  const id = newId('workspace');
  await db().transaction(async (trx) => {
    await trx('workspaces').insert({
      id,
      name: input.name,
      plan,
      feature_overrides: JSON.stringify(input.features ?? {}),
      require_review_workflow: input.requireReviewWorkflow ?? false,
      billing_workspace_id: input.billingWorkspaceId ?? null,
      ai_enforcement: input.aiEnforcement ?? 'block',
    });
    await createDefaultStatuses(trx, id);
  });
  return db()('workspaces').where({ id }).first();
}

export async function setWorkspacePlan(workspaceId: string, planName: string) {
  const plan = planName.toUpperCase();
  if (!(PLAN_NAMES as readonly string[]).includes(plan))
    throw new AdminError(`unknown plan "${planName}"; one of ${PLAN_NAMES.join(', ')}`);
  const n = await db()('workspaces').where({ id: workspaceId }).update({ plan, updated_at: db().fn.now() });
  if (!n) throw new AdminError(`no workspace ${workspaceId}`);
  await publishAuthInvalidation(`workspace:${workspaceId}`);
  return db()('workspaces').where({ id: workspaceId }).first();
}

export async function createUser(input: { email: string; name?: string; password?: string }) {
  const id = newId('user');
  await db()('users').insert({
    id,
    email: input.email.toLowerCase(),
    name: input.name ?? '',
    password_hash: input.password ? await hashPassword(input.password) : null,
  });
  return db()('users').where({ id }).first('id', 'email', 'name', 'created_at');
}

export async function setUserPassword(userRef: string, password: string) {
  const user = await findUser(userRef);
  await db()('users')
    .where({ id: user.id })
    .update({ password_hash: await hashPassword(password), updated_at: db().fn.now() });
  return { id: user.id, email: user.email };
}

export async function findUser(ref: string) {
  const user = ref.includes('@')
    ? await db()('users').whereRaw('lower(email) = ?', [ref.toLowerCase()]).first()
    : await db()('users').where({ id: ref }).first();
  if (!user) throw new AdminError(`no user ${ref}`);
  return user;
}

export async function addMember(input: { workspaceId: string; user: string; role: string; projectIds?: string[] }) {
  const role = roleSlug(input.role);
  if (!role) throw new AdminError(`unknown role "${input.role}"; use Admin, Member, Client or a legacy slug`);
  const user = await findUser(input.user);
  const id = newId('membership');
  await db().transaction(async (trx) => {
    const [m] = await trx('memberships')
      .insert({ id, workspace_id: input.workspaceId, user_id: user.id, role })
      .onConflict(['workspace_id', 'user_id'])
      .merge({ role })
      .returning('id');
    if (input.projectIds) {
      const projects = await Project.knexForWorkspace(input.workspaceId, trx).whereIn('id', input.projectIds).pluck('id');
      const missing = input.projectIds.filter((p) => !projects.includes(p));
      if (missing.length) throw new AdminError(`projects not in workspace: ${missing.join(', ')}`);
      await trx('membership_projects').where({ membership_id: m.id }).delete();
      if (projects.length) await trx('membership_projects').insert(projects.map((p: string) => ({ membership_id: m.id, project_id: p })));
    }
  });
  return { workspaceId: input.workspaceId, userId: user.id, role, projectIds: input.projectIds ?? [] };
}

export { CONNECTION_PRESETS, type ConnectionPreset } from './presets';

function presetColumns(preset: Exclude<ConnectionPreset, 'none'>, now = Date.now()) {
  const token = () => encrypt(`preset_${randomSecret(32)}`);
  const base = {
    access_token_enc: token(),
    refresh_token_enc: token(),
    access_token_expires_at: new Date(now + 60 * 86_400_000),
    refresh_token_expires_at: new Date(now + 365 * 86_400_000),
    connection_status: 'CONNECTED',
    last_validated_at: new Date(now),
    consecutive_failures: 0,
    revoked_at: null as Date | null,
  };
  switch (preset) {
    case 'connected':
      return base;
    case 'expiring_soon':
      return { ...base, access_token_expires_at: new Date(now + 5 * 86_400_000) };
    case 'degraded':
      return { ...base, connection_status: 'DEGRADED', consecutive_failures: 2, last_failure_at: new Date(now) };
    // spec 2.6: an account holding no token still reads CONNECTED in the raw cache.
    case 'disconnected':
      return {
        ...base,
        access_token_enc: null,
        refresh_token_enc: null,
        access_token_expires_at: null,
        refresh_token_expires_at: null,
        last_validated_at: null,
      };
    case 'revoked':
      return { ...base, connection_status: 'REVOKED', revoked_at: new Date(now) };
  }
}

export async function createProject(input: {
  workspaceId: string;
  type: 'PERSONAL_BRAND' | 'COMPANY_PAGE' | 'AMPLIFIER';
  name: string;
  username?: string | null;
  connection?: ConnectionPreset;
  linkedProjectId?: string;
  timezone?: string;
  language?: string;
  organizationId?: string;
  personId?: string;
}) {
  const timezone = input.timezone ?? 'UTC';
  if (!isValidTimeZone(timezone)) throw new AdminError(`unknown timezone "${timezone}"`);
  const preset = input.connection ?? 'connected';
  const projectId = newId('project');
  await db().transaction(async (trx) => {
    let connectionId: string | null = null;
    if (input.type === 'COMPANY_PAGE') {
      if (input.linkedProjectId) connectionId = await connectionOf(trx, input.workspaceId, input.linkedProjectId);
      else if (preset !== 'none')
        connectionId = await insertConnection(trx, input.workspaceId, preset, `${input.name} admin`, input.personId);
    } else {
      connectionId = await insertConnection(trx, input.workspaceId, preset, input.name, input.personId);
    }
    await trx('projects').insert({
      id: projectId,
      workspace_id: input.workspaceId,
      type: input.type,
      slug: slugify(input.name),
      display_name: input.name,
      username: input.username ?? null,
      timezone,
      language: input.language ?? 'en',
      connection_id: connectionId,
      network_organization_id: input.type === 'COMPANY_PAGE' ? (input.organizationId ?? String(Math.floor(Math.random() * 1e9))) : null,
      // spec 2.4: no streak until the project has published; company pages never have one.
      current_streak: null,
      longest_streak: null,
    });
  });
  return db()('projects').where({ id: projectId }).first();
}

async function connectionOf(trx: Knex.Transaction, workspaceId: string, projectId: string): Promise<string> {
  const p = await Project.knexForWorkspace(workspaceId, trx).where({ id: projectId }).first('type', 'connection_id');
  if (!p) throw new AdminError(`no project ${projectId} in workspace ${workspaceId}`);
  if (p.type === 'COMPANY_PAGE' || !p.connection_id) throw new AdminError('link a company page to a personal-brand or amplifier project');
  return p.connection_id;
}

async function insertConnection(
  trx: Knex.Transaction,
  workspaceId: string,
  preset: ConnectionPreset,
  displayName: string,
  personId?: string,
): Promise<string> {
  const id = newId('connection');
  const cols =
    preset === 'none'
      ? { connection_status: 'UNKNOWN' } // never connected
      : presetColumns(preset);
  await trx('network_connections').insert({
    id,
    workspace_id: workspaceId,
    display_name: displayName,
    network_person_id: personId ?? null,
    ...cols,
  });
  return id;
}

/** Links a company page to the personal account of one of its admins (spec 2.6). */
export async function linkCompanyPage(workspaceId: string, companyProjectId: string, adminProjectId: string) {
  await db().transaction(async (trx) => {
    const page = await Project.knexForWorkspace(workspaceId, trx).where({ id: companyProjectId, type: 'COMPANY_PAGE' }).first('id');
    if (!page) throw new AdminError(`no company page ${companyProjectId} in workspace ${workspaceId}`);
    await trx('projects')
      .where({ id: companyProjectId })
      .update({ connection_id: await connectionOf(trx, workspaceId, adminProjectId), updated_at: trx.fn.now() });
  });
  return db()('projects').where({ id: companyProjectId }).first();
}

function slugify(name: string): string {
  return (
    name
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 60) || 'project'
  );
}

function validateKeyScopes(scopes: string[]): string[] {
  const expanded = expandScopes(scopes);
  const unknown = expanded.filter((s) => !ALL_SCOPES.includes(s));
  if (unknown.length) throw new AdminError(`unknown scopes: ${unknown.join(', ')}`);
  // spec 5.1: webhooks:manage is for OAuth tokens only.
  const oauthOnly = expanded.filter((s) => (OAUTH_ONLY_SCOPES as readonly string[]).includes(s));
  if (oauthOnly.length) throw new AdminError(`API keys cannot hold: ${oauthOnly.join(', ')}`);
  return expanded;
}

export async function issueApiKey(input: {
  workspaceId: string;
  scopes: string[];
  mode?: 'live' | 'test';
  name?: string;
  expiresAt?: Date | null;
}) {
  const w = await db()('workspaces').where({ id: input.workspaceId }).first('id');
  if (!w) throw new AdminError(`no workspace ${input.workspaceId}`);
  return createApiKey({
    workspaceId: input.workspaceId,
    scopes: validateKeyScopes(input.scopes),
    mode: input.mode ?? 'live',
    name: input.name,
    expiresAt: input.expiresAt,
  });
}

export async function setApiKeyScopes(keyId: string, scopes: string[]) {
  const expanded = validateKeyScopes(scopes);
  const n = await db()('api_keys').where({ id: keyId }).update({ scopes: expanded, updated_at: db().fn.now() });
  if (!n) throw new AdminError(`no API key ${keyId}`);
  await publishAuthInvalidation(`key:${keyId}`);
  return { id: keyId, scopes: expanded };
}

export async function revokeApiKey(keyId: string) {
  const n = await db()('api_keys').where({ id: keyId }).update({ revoked_at: db().fn.now(), updated_at: db().fn.now() });
  if (!n) throw new AdminError(`no API key ${keyId}`);
  await publishAuthInvalidation(`key:${keyId}`);
  return { id: keyId, revoked: true };
}

// Read side for operators (bin/admin list/show verbs). Password and key hashes are never
// selected, so no caller can print them by accident.

export async function getWorkspace(workspaceId: string) {
  const w = await db()('workspaces').where({ id: workspaceId }).first();
  if (!w) throw new AdminError(`no workspace ${workspaceId}`);
  return w;
}

export async function listWorkspaces() {
  return db()('workspaces as w')
    .orderBy([{ column: 'w.created_at' }, { column: 'w.id' }])
    .select(
      'w.*',
      db().raw('(select count(*)::int from projects p where p.workspace_id = w.id) as project_count'),
      db().raw('(select count(*)::int from memberships m where m.workspace_id = w.id) as member_count'),
      db().raw('(select count(*)::int from api_keys k where k.workspace_id = w.id and k.revoked_at is null) as active_key_count'),
    );
}

export async function listUsers() {
  const users = await db()('users')
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select('id', 'email', 'name', 'created_at', db().raw('password_hash is not null as has_password'));
  const memberships = await db()('memberships').orderBy('created_at').select('user_id', 'workspace_id', 'role');
  return users.map((u: { id: string }) => ({ ...u, memberships: memberships.filter((m: { user_id: string }) => m.user_id === u.id) }));
}

export interface MemberRow {
  id: string;
  user_id: string;
  email: string;
  name: string;
  role: string;
  created_at: Date;
  project_ids: string[];
}

export async function listMembers(workspaceId: string): Promise<MemberRow[]> {
  const rows = await Membership.knexForWorkspace(workspaceId, undefined, 'm')
    .join('users as u', 'u.id', 'm.user_id')
    .orderBy([{ column: 'm.created_at' }, { column: 'm.id' }])
    .select('m.id', 'm.user_id', 'u.email', 'u.name', 'm.role', 'm.created_at');
  const assigned = await db()('membership_projects')
    .whereIn(
      'membership_id',
      rows.map((r: { id: string }) => r.id),
    )
    .select('membership_id', 'project_id');
  return rows.map((r: Omit<MemberRow, 'project_ids'>) => ({
    ...r,
    project_ids: assigned
      .filter((a: { membership_id: string }) => a.membership_id === r.id)
      .map((a: { project_id: string }) => a.project_id),
  }));
}

/** Projects joined with their connection, in the shape the API's project presenter reads. */
export async function listProjects(workspaceId: string) {
  return Project.knexForWorkspace(workspaceId)
    .leftJoin('network_connections as c', 'c.id', 'projects.connection_id')
    .orderBy([{ column: 'projects.created_at' }, { column: 'projects.id' }])
    .select(PROJECT_CONNECTION_COLUMNS);
}

const API_KEY_COLUMNS = [
  'id',
  'workspace_id',
  'name',
  'mode',
  'last4',
  'scopes',
  'expires_at',
  'revoked_at',
  'last_used_at',
  'created_at',
  'updated_at',
];

export async function listApiKeys(workspaceId: string) {
  return ApiKey.knexForWorkspace(workspaceId)
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select(API_KEY_COLUMNS);
}

export async function getApiKey(keyId: string) {
  const k = await db()('api_keys').where({ id: keyId }).first(API_KEY_COLUMNS);
  if (!k) throw new AdminError(`no API key ${keyId}`);
  return k;
}

// --- OAuth (spec 5.3, 5.5): agency ownership and a user's consents ---------------------------

async function oauthAdmin<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw err instanceof OAuthAdminError ? new AdminError(err.message) : err;
  }
}

/** Makes a user an owner of the agency that bills `clientWorkspaceId` (optionally billing it to `agencyWorkspaceId` first). */
export async function makeAgencyOwner(input: { user: string; clientWorkspaceId: string; agencyWorkspaceId?: string }) {
  const user = await findUser(input.user);
  return oauthAdmin(() =>
    grantAgencyOwnership({ userId: user.id, clientWorkspaceId: input.clientWorkspaceId, agencyWorkspaceId: input.agencyWorkspaceId }),
  );
}

export async function removeAgencyOwner(input: { user: string; agencyWorkspaceId: string }) {
  const user = await findUser(input.user);
  return oauthAdmin(() => revokeAgencyOwnership({ userId: user.id, agencyWorkspaceId: input.agencyWorkspaceId }));
}

export async function listUserGrants(userRef: string) {
  const user = await findUser(userRef);
  return { userId: user.id, email: user.email, grants: await listGrants(user.id) };
}

/** Revokes a user's OAuth consents (one, one client's, or all) and kills every token issued under them. */
export async function revokeUserGrants(input: { user: string; grantId?: string; clientId?: string }) {
  const user = await findUser(input.user);
  return oauthAdmin(() => revokeGrants({ userId: user.id, grantId: input.grantId, clientId: input.clientId }));
}
