import http from 'node:http';
import pLimit from 'p-limit';
import { requestText, summarize } from '../harness/load';
import { apiAnswers, launch } from '../../tooling/launcher';
import { freePort } from '../../tooling/ports';

// The publishing bench's customer and its posts: the seed, the API process the posts are
// created through (or the same code in this process), and the creation of a batch of posts.
// The population bench (bench/population.ts) creates its posts with the same pieces. Nothing
// here reads a bench's command line: each bench passes its own settings.

/** A BUSINESS workspace, `projects` personal-brand projects each connected with a real simulator token, a pilot project and a write key. */
export async function seed(sim: import('../../sim/network/control').SimulatorControl, projects: number) {
  const { createWorkspace, issueApiKey } = await import('../../admin/provision');
  const { connectedPersonalProject } = await import('../../admin/simulatedAccounts');
  const workspace = await createWorkspace({ name: 'Publishing Bench Co', plan: 'BUSINESS' });
  const connected = async (i: number) =>
    (
      await connectedPersonalProject(sim, workspace.id, {
        personId: `bench${i}`,
        name: `Bench Person ${i}`,
        vanityName: `bench-person-${i}`,
      })
    ).project.id as string;
  const projectIds: string[] = [];
  for (let i = 0; i < projects; i++) projectIds.push(await connected(i));
  const pilotProjectId = await connected(projects);
  const key = await issueApiKey({ workspaceId: workspace.id, scopes: ['write'], name: 'publishing bench' });
  return { workspaceId: workspace.id, apiKey: key.key, projectIds, pilotProjectId };
}

export type ApiChild = Awaited<ReturnType<typeof startApi>>;

/** The API process (api/main.ts) on a free port, started by the one launcher, once it answers. */
export async function startApi() {
  const port = await freePort();
  const api = await launch({ kind: 'api', env: { PORT: String(port) }, ready: apiAnswers(port), readyTimeoutMs: 60_000 });
  return { child: api.child, pid: api.pid, port, tail: api.tail, stop: async () => void (await api.stop(10_000)) };
}

export interface CreateItem {
  projectId: string;
  content: string;
  scheduledFor: Date;
}
export type CreateResult = Awaited<ReturnType<typeof createAll>>;
export type Creator = (item: CreateItem) => Promise<string>;

/** POST /v1/posts on the API process, with one key, or the key of the item's workspace. */
export function apiCreator(
  apiPort: number,
  apiKey: string | ((item: CreateItem) => string),
  concurrency: number,
): { create: Creator; close(): void } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const url = new URL(`http://127.0.0.1:${apiPort}/v1/posts`);
  const keyOf = typeof apiKey === 'string' ? () => apiKey : apiKey;
  const create: Creator = async (item) => {
    const headers = { authorization: `Bearer ${keyOf(item)}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ projectId: item.projectId, content: item.content, scheduledFor: item.scheduledFor.toISOString() });
    const res = await requestText(agent, url, 'POST', headers, body);
    if (res.status !== 200 && res.status !== 201) throw new Error(`HTTP ${res.status}: ${res.body.slice(0, 300)}`);
    return JSON.parse(res.body).data.id;
  };
  return { create, close: () => agent.destroy() };
}

export async function inProcessCreator(workspaceId: string): Promise<{ create: Creator; close(): void }> {
  // The handler of POST /v1/posts minus HTTP, auth and validation: the same transaction and the
  // same after-commit signal-with-start.
  const { db } = await import('../../lib/db');
  const { insertPost } = await import('../../lib/posts/write');
  const { afterPostCommitted } = await import('../../lib/posts/afterCommit');
  return {
    create: async (item) => {
      const committed = await db().transaction((trx) =>
        insertPost(trx, {
          workspaceId,
          projectId: item.projectId,
          content: item.content,
          contentType: 'PERSONAL',
          scheduledAt: item.scheduledFor,
        }),
      );
      await afterPostCommitted(committed);
      return committed.post.id;
    },
    close: () => undefined,
  };
}

/** `create` over every item, `concurrency` in flight: ids (null where it failed), latency and rate. */
export async function createAll<T = CreateItem>(
  items: T[],
  create: (item: T) => Promise<string>,
  concurrency: number,
  onProgress?: (done: number) => void,
) {
  const ids: (string | null)[] = new Array(items.length).fill(null);
  const lat: number[] = [];
  const errorSamples: string[] = [];
  let errors = 0;
  let done = 0;
  const t0 = performance.now();
  await pLimit(concurrency).map(items, async (item, i) => {
    const a = performance.now();
    try {
      ids[i] = await create(item);
      lat.push(performance.now() - a);
    } catch (err) {
      errors++;
      if (errorSamples.length < 5) errorSamples.push((err as Error).message);
    }
    done++;
    if (onProgress && done % 1000 === 0) onProgress(done);
  });
  const durationMs = performance.now() - t0;
  return { ids, latencyMs: summarize(lat), durationMs, rate: (items.length - errors) / (durationMs / 1000), errors, errorSamples };
}
