import { addMember, createProject, createUser, createWorkspace, issueApiKey, type ConnectionPreset } from '../../admin/provision';
import { db } from '../../lib/db';
import { newId, randomBase62 } from '../../lib/ids';
import { storeDocument } from '../../lib/knowledge/ingest';
import { insertQueuedJob } from '../../lib/jobs/queue';
import { loadAiLimits } from '../../lib/spend/meters';

// Fixtures made through the same provisioning code the operator CLI uses.
export async function workspaceWithKey(
  opts: { plan?: string; scopes?: string[]; name?: string; projects?: number; connection?: ConnectionPreset; timezone?: string } = {},
) {
  const workspace = await createWorkspace({ name: opts.name ?? `Acme ${randomBase62(6)}`, plan: opts.plan ?? 'BUSINESS' });
  const projects = [];
  for (let i = 0; i < (opts.projects ?? 1); i++) {
    projects.push(
      await createProject({
        workspaceId: workspace.id,
        type: 'PERSONAL_BRAND',
        name: `Person ${i} ${randomBase62(4)}`,
        username: `person-${i}`,
        connection: opts.connection ?? 'connected',
        timezone: opts.timezone,
      }),
    );
  }
  const key = await issueApiKey({ workspaceId: workspace.id, scopes: opts.scopes ?? ['read', 'write'] });
  return { workspace, projects, project: projects[0]!, key: key.key, keyId: key.id };
}

/** A post generation accepted as the API accepts one (spend reserved, no workflow started): a QUEUED job. */
export async function queuedPostGeneration(ws: { workspace: { id: string }; project: { id: string; type: string }; keyId: string }) {
  return insertQueuedJob({
    workspaceId: ws.workspace.id,
    createdBy: ws.keyId,
    project: ws.project,
    type: 'POST_GENERATION',
    input: { sourceText: 'x', language: 'en', contentType: 'text', source: { type: 'text' } },
    estimatedMs: 1000,
    limits: await loadAiLimits(db(), ws.workspace.id),
  });
}

/** A scheduled post's row, for tests that write many straight into `posts` (no workflow is started for it). */
export function scheduledPostRow(
  ws: { workspace: { id: string }; project: { id: string } },
  id: string,
  scheduledAt: Date,
  over: Record<string, unknown> = {},
) {
  return {
    id,
    workspace_id: ws.workspace.id,
    project_id: ws.project.id,
    status: 'scheduled',
    title: '',
    content: 'x',
    content_type: 'PERSONAL',
    scheduled_at: scheduledAt,
    ...over,
  };
}

/** The password of every user the fixtures create. */
export const PASSWORD = 'correct horse battery staple';

export async function member(workspaceId: string, role: string, projectIds?: string[]) {
  const user = await createUser({
    email: `u-${randomBase62(10)}@example.com`,
    name: `User ${randomBase62(4)}`,
    password: PASSWORD,
  });
  await addMember({ workspaceId, user: user.id, role, projectIds });
  return user;
}

export function uniqueKey(): string {
  return `k_${randomBase62(20)}`;
}

/** An id of the same form that never existed: the prefix kept, the random part replaced. */
export function neverExisted(id: string): string {
  const cut = id.indexOf('_') + 1;
  return id.slice(0, cut) + 'Zz9'.repeat(40).slice(0, id.length - cut);
}

/**
 * A knowledge document of a project stored as its finished ingest job would store it, without a
 * worker (the ingest itself is covered in test/knowledge). `language` also pins the search
 * configuration; English when omitted.
 */
export async function storedDocument(
  ws: { workspaceId: string; projectId: string },
  doc: { text: string; name: string; tags?: string[]; language?: string },
): Promise<{ documentId: string; chunkCount: number; jobId: string }> {
  const jobId = newId('job');
  const { workspaceId, projectId } = ws;
  await db()('jobs').insert({ id: jobId, workspace_id: workspaceId, project_id: projectId, type: 'KNOWLEDGE_INGEST', status: 'DONE' });
  const stored = await storeDocument(
    db(),
    { id: jobId, workspace_id: workspaceId },
    { type: 'text', scope: 'PROJECT', projectId, tags: doc.tags ?? [], ...(doc.language ? { language: doc.language } : {}) },
    { text: doc.text, name: doc.name, sourceName: null, sourceUrl: null, language: doc.language ?? 'en' },
  );
  return { ...stored, jobId };
}
