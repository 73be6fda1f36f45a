import type { AnyOperation } from '../api/operation';
import { config } from '../lib/config';
import { db } from '../lib/db';
import { Project } from '../lib/models';
import type { SimulatorControl } from '../sim/network/control';
import { callOperation as call, operatorContext } from './asOperator';
import { projectView } from './cli/views';
import { storeConnectionTokens } from './connections';
import {
  AdminError,
  addMember,
  createProject,
  createUser,
  createWorkspace,
  findUser,
  issueApiKey,
  linkCompanyPage,
  listProjects,
  setUserPassword,
  setWorkspacePlan,
  type ConnectionPreset,
} from './provision';

// Demo and support data made through the API's own operations (notes.create, posts.create,
// posts.update; admin/asOperator.ts), not by writing rows: a seeded post is validated, named,
// slotted and, when it has a schedule, verified and handed to its publish workflow exactly as a
// client's would be, so it really publishes.
// The demo workspace of `npm run seed` (bin/seed.ts), at the end, is made through the same
// provisioning as bin/admin's workspace, project, user and key commands.

const DEMO_LINES = [
  'Three things we learned shipping every week for a year.',
  'The best meeting is the one that became a written update.',
  'Why our onboarding checklist now fits on one page.',
  'What a failed launch taught us about listening to support.',
  'Small, boring improvements compound faster than big bets.',
  'How we cut our review time in half without skipping reviews.',
];

export function demoText(i: number, kind: 'post' | 'note'): string {
  const line = DEMO_LINES[i % DEMO_LINES.length]!;
  return kind === 'note' ? `Idea: ${line}` : `${line}\n\nA demo ${kind} (#${i + 1}) seeded by an operator.`;
}

export interface SeedPostsInput {
  workspaceId: string;
  projectId: string;
  count: number;
  content?: string;
  title?: string;
  contentType?: string;
  statusCategory?: string;
  statusId?: string;
  /** First post's schedule (ISO 8601, offset-less = the project's zone); later ones follow `spacingMinutes` apart. */
  scheduledFor?: string;
  spacingMinutes: number;
}

export async function seedPosts(input: SeedPostsInput) {
  const ctx = await operatorContext(input.workspaceId);
  const { createPost, updatePost } = await import('../api/operations/posts/posts');
  const first = input.scheduledFor !== undefined ? scheduleStart(input.scheduledFor) : undefined;
  const posts: unknown[] = [];
  for (let i = 0; i < input.count; i++) {
    const created = await call<{ data: { id: string } }>(createPost as AnyOperation, ctx, {
      projectId: input.projectId,
      content: input.content ?? demoText(i, 'post'),
      title: input.title,
      contentType: input.contentType,
    });
    let post: unknown = created.data;
    if (input.statusCategory !== undefined || input.statusId !== undefined) {
      post = (
        await call<{ data: unknown }>(updatePost as AnyOperation, ctx, {
          postId: created.data.id,
          statusCategory: input.statusCategory,
          statusId: input.statusId,
        })
      ).data;
    }
    if (first) {
      // PATCH /v1/posts/{id} with scheduledFor: the connection check, the slot, post.scheduled
      // and the publish workflow's signal, as for any client (spec 3.1).
      const at = first.shift(i * input.spacingMinutes);
      try {
        post = (await call<{ data: unknown }>(updatePost as AnyOperation, ctx, { postId: created.data.id, scheduledFor: at })).data;
      } catch (err) {
        if (err instanceof AdminError) throw new AdminError(`${err.message} (post ${created.data.id} was created and stays a draft)`);
        throw err;
      }
    }
    posts.push(post);
  }
  return posts;
}

export interface SeedNotesInput {
  workspaceId: string;
  projectId: string;
  count: number;
  content?: string;
  contentType?: string;
  slotDate?: string;
  spacingMinutes: number;
}

export async function seedNotes(input: SeedNotesInput) {
  const ctx = await operatorContext(input.workspaceId);
  const { createNote } = await import('../api/operations/notes/notes');
  const first = input.slotDate !== undefined ? scheduleStart(input.slotDate) : undefined;
  const notes: unknown[] = [];
  for (let i = 0; i < input.count; i++) {
    const r = await call<{ data: unknown }>(createNote as AnyOperation, ctx, {
      projectId: input.projectId,
      content: input.content ?? demoText(i, 'note'),
      contentType: input.contentType,
      slotDate: first ? first.shift(i * input.spacingMinutes) : undefined,
    });
    notes.push(r.data);
  }
  return notes;
}

/**
 * A first date-time and its successors, kept in the caller's notation: an offset-less value
 * stays offset-less (read in the project's zone by the operation), one with an offset keeps it.
 */
function scheduleStart(raw: string) {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/.exec(raw);
  if (!m)
    throw new AdminError(`"${raw}" is not an ISO 8601 date-time (e.g. 2027-01-15T09:00:00Z, or 2027-01-15T09:00 in the project's zone)`);
  const offset = m[3];
  // Arithmetic on the wall-clock fields as if UTC, then written back in the same notation.
  const base = Date.parse(`${m[1]}${m[2] ?? ':00'}Z`);
  return {
    shift(minutes: number): string {
      if (minutes === 0) return raw;
      const t = new Date(base + minutes * 60_000).toISOString().slice(0, 19);
      return offset ? `${t}${offset}` : t;
    },
  };
}

// --- The demo workspace (`npm run seed`) ---------------------------------------------------------

const WORKSPACE_NAME = 'Demo Workspace';
const PLAN = 'BUSINESS';
const USER = { email: 'demo@example.com', name: 'Demo Admin', password: 'demo-password' };
const KEY_SCOPES = ['read', 'write', 'posts:publish', 'posts:destroy'];
const PROJECTS = {
  personal: { type: 'PERSONAL_BRAND', name: 'Dana Reed', username: 'dana-reed', connection: 'connected' },
  amplifier: { type: 'AMPLIFIER', name: 'Sam Amplifier', username: 'sam-amplifier', connection: 'expiring_soon' },
  company: { type: 'COMPANY_PAGE', name: 'Demo Company', username: 'demo-company' },
} as const;

async function findOrCreateProject(
  workspaceId: string,
  spec: { type: 'PERSONAL_BRAND' | 'AMPLIFIER' | 'COMPANY_PAGE'; name: string; username: string; connection?: ConnectionPreset },
  linkedProjectId?: string,
) {
  const existing = await Project.knexForWorkspace(workspaceId)
    .where({ type: spec.type, username: spec.username })
    .orderBy('created_at')
    .first('id');
  if (existing) return { id: existing.id as string, created: false };
  const p = await createProject({
    workspaceId,
    type: spec.type,
    name: spec.name,
    username: spec.username,
    connection: spec.connection,
    linkedProjectId,
  });
  return { id: p.id as string, created: true };
}

/**
 * `npm run seed`'s demo workspace, made through the provisioning the operator commands use;
 * returns the text that names what was made and the new key. With the network simulator
 * answering (`npm start` running), the personal account gets real tokens from it, so scheduled
 * demo posts really publish.
 */
export async function seedDemoWorkspace(sim: SimulatorControl): Promise<string> {
  let workspace = await db()('workspaces').where({ name: WORKSPACE_NAME }).orderBy('created_at').first();
  const reused = Boolean(workspace);
  if (!workspace) workspace = await createWorkspace({ name: WORKSPACE_NAME, plan: PLAN });
  // A key on a plan without API access would not work, and a working key is the point.
  else if (workspace.plan !== PLAN) workspace = await setWorkspacePlan(workspace.id, PLAN);

  const personal = await findOrCreateProject(workspace.id, PROJECTS.personal);
  const amplifier = await findOrCreateProject(workspace.id, PROJECTS.amplifier);
  const company = await findOrCreateProject(workspace.id, PROJECTS.company, personal.id);
  if (!company.created) await linkCompanyPage(workspace.id, company.id, personal.id);

  // With `npm start` running, the personal account gets real tokens from the local network
  // simulator (and administers the company page there), so scheduled demo posts really publish.
  let networkNote = 'preset tokens: run `npm start` first, then seed again, for an account that can publish';
  try {
    await sim.health();
    const issued = await sim.issueToken({ personId: 'dana-reed', name: PROJECTS.personal.name, vanityName: PROJECTS.personal.username });
    await storeConnectionTokens({
      workspaceId: workspace.id,
      projectId: personal.id,
      accessToken: issued.accessToken,
      refreshToken: issued.refreshToken,
      expiresAt: new Date(issued.expiresAt),
      refreshExpiresAt: issued.refreshTokenExpiresAt ? new Date(issued.refreshTokenExpiresAt) : null,
      personId: 'dana-reed',
      name: PROJECTS.personal.name,
      vanityName: PROJECTS.personal.username,
    });
    const org = await db()('projects').where({ id: company.id }).first('network_organization_id');
    await sim.setOrganizationAdmins(org.network_organization_id, ['dana-reed']);
    networkNote = 'connected through the local network simulator';
  } catch {
    // No simulator reachable: the preset connection stays.
  }

  let user;
  try {
    user = await findUser(USER.email);
    await setUserPassword(user.id, USER.password);
  } catch (err) {
    if (!(err instanceof AdminError)) throw err;
    user = await createUser(USER);
  }
  await addMember({ workspaceId: workspace.id, user: user.id, role: 'Admin' });

  const key = await issueApiKey({ workspaceId: workspace.id, scopes: KEY_SCOPES, mode: 'live', name: 'seed' });

  const projects: ReturnType<typeof projectView>[] = (await listProjects(workspace.id)).map(projectView);
  const line = (id: string, note: string) => {
    const p = projects.find((x) => x.id === id)!;
    return `${p.id}  ${p.name.padEnd(14)} ${p.type.padEnd(15)} ${note}`;
  };
  const out = [
    reused ? `Reused the existing ${WORKSPACE_NAME} and issued a new API key.` : `Created the ${WORKSPACE_NAME}.`,
    '',
    `  workspace  ${workspace.id}  ${workspace.name} (${PLAN})`,
    `  projects   ${line(personal.id, projects.find((x) => x.id === personal.id)!.network?.state ?? 'no connection')}`,
    `             ${line(amplifier.id, projects.find((x) => x.id === amplifier.id)!.network?.state ?? 'no connection')}`,
    `             ${line(company.id, `linked to ${PROJECTS.personal.name}`)}`,
    `  network    ${networkNote}`,
    `  user       ${USER.email} / ${USER.password} (Admin)`,
    `  API key    ${key.id} (${key.mode}, scopes ${KEY_SCOPES.join(',')}, ${key.scopes.length} once expanded)`,
    '',
    `  ${key.key}`,
    '',
    'Try it once the API is running (npm start):',
    '',
    `  curl -H "Authorization: Bearer ${key.key}" ${config.publicUrl}/v1/workspaces/me`,
    '',
    'Running npm run seed again reuses this workspace, its projects and the user and prints a new key;',
    `earlier keys stay valid until revoked (bin/admin key list --workspace ${workspace.id}, bin/admin key revoke --key <id>).`,
  ];
  return out.join('\n');
}
