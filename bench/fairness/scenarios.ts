import { createServer, type Server } from 'node:http';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import pLimit from 'p-limit';
import { requestText } from '../harness/load';
import { postContent, prng } from '../harness/content';
import { setTimeout as sleep } from 'node:timers/promises';

// The fairness bench's three scenarios (bench/fairness.ts). Each phase puts the quiet
// workspaces' work on the service, alone or beside the noisy workspace's burst, and answers the
// quiet work's lags; the service runs as production runs it (an API and a worker of the fleet).

export interface Tenant {
  workspaceId: string;
  key: string;
  projectIds: string[];
  /** Its webhook endpoint (every event type). */
  endpointId: string;
}

export interface Sizes {
  /** Posts the noisy workspace schedules for the minute (publishing). */
  burst: number;
  /** Posts each quiet workspace schedules for the same minute. */
  quietPosts: number;
  /** Generation jobs the noisy workspace queues; each quiet one queues one. */
  jobs: number;
  /** Events of the noisy workspace (webhooks); each quiet one emits `quietEvents`. */
  events: number;
  quietEvents: number;
  /** Seconds to wait for a phase before giving up. */
  timeoutS: number;
  /** Seconds from the start of creation to the due minute; 0 picks it from the number of posts. */
  leadS: number;
}

export interface Phase {
  /** The quiet workspaces' lags, milliseconds. */
  lagsMs: number[];
  /** The noisy workspace's work, from its first request to its last item done, seconds (with noisy only). */
  noisyDrainS?: number;
  /** Items not done within the timeout (quiet and noisy). */
  unfinished: number;
  /** Something the reader must know about the phase (creation overran the due minute). */
  notes: string[];
}

export interface Ctx {
  apiUrl: string;
  agent: http.Agent;
  db: Knex;
  noisy: Tenant;
  quiet: Tenant[];
  sizes: Sizes;
  receivers: Receivers;
  /** Posts created a second through the API in the last phase (the next phase's due minute leaves room for its creation). */
  createdPerS: number;
  log: (line: string) => void;
}

async function api(ctx: Ctx, t: Tenant, method: string, path: string, body: unknown): Promise<any> {
  const res = await requestText(
    ctx.agent,
    new URL(path, ctx.apiUrl),
    method,
    { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
    JSON.stringify(body),
  );
  if (res.status !== 200 && res.status !== 201) throw new Error(`${method} ${path} answered ${res.status}: ${res.body.slice(0, 300)}`);
  return JSON.parse(res.body).data;
}

/** Polls until `done()` counts `n` or the timeout passes; answers how many were left. */
async function waitDone(ctx: Ctx, n: number, done: () => Promise<number>): Promise<number> {
  const deadline = Date.now() + ctx.sizes.timeoutS * 1000;
  for (;;) {
    const d = await done();
    if (d >= n) return 0;
    if (Date.now() > deadline) return n - d;
    await sleep(500);
  }
}

const countIn = async (ctx: Ctx, table: string, ids: string[], column: string, values: string[]) =>
  Number(((await ctx.db(table).whereIn('id', ids).whereIn(column, values).count('* as n').first()) as { n: string }).n);

// ── Publishing: posts due in the same minute ─────────────────────────────────────────────────

export async function publishingPhase(ctx: Ctx, withNoisy: boolean): Promise<Phase> {
  const rand = prng(withNoisy ? 2 : 1);
  const items: Array<{ t: Tenant; projectId: string; quiet: boolean }> = [];
  for (const t of ctx.quiet)
    for (let i = 0; i < ctx.sizes.quietPosts; i++) items.push({ t, projectId: t.projectIds[i % t.projectIds.length]!, quiet: true });
  if (withNoisy)
    for (let i = 0; i < ctx.sizes.burst; i++)
      items.push({ t: ctx.noisy, projectId: ctx.noisy.projectIds[i % ctx.noisy.projectIds.length]!, quiet: false });
  // Created in a random interleaving: the workflows are held by the server until the minute
  // (start delay), so the order of creation is not the order of dispatch.
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  // The due minute leaves room for creating every post at the rate the last phase created them
  // (a shared machine's rate varies), with half again as margin.
  const leadMs = (ctx.sizes.leadS || 15 + (1.5 * items.length) / ctx.createdPerS) * 1000;
  const t0 = Date.now();
  const due = new Date(Math.ceil((t0 + leadMs) / 1000) * 1000);
  const ids: Array<{ id: string; quiet: boolean }> = [];
  await pLimit(20).map(items, async (item) => {
    const post = await api(ctx, item.t, 'POST', '/v1/posts', {
      projectId: item.projectId,
      content: postContent(rand),
      scheduledFor: due.toISOString(),
    });
    ids.push({ id: post.id, quiet: item.quiet });
  });
  const notes: string[] = [];
  const createdBy = Date.now();
  ctx.createdPerS = items.length / Math.max(0.001, (createdBy - t0) / 1000);
  if (createdBy > due.getTime())
    notes.push(`creation ended ${((createdBy - due.getTime()) / 1000).toFixed(1)} s after the due minute: raise --lead`);
  ctx.log(
    `${items.length} posts created in ${((createdBy - t0) / 1000).toFixed(1)} s, due ${due.toISOString().slice(11, 19)} (${((due.getTime() - createdBy) / 1000).toFixed(1)} s later)`,
  );
  const all = ids.map((x) => x.id);
  const quietIds = ids.filter((x) => x.quiet).map((x) => x.id);
  const unfinished = await waitDone(ctx, all.length, () => countIn(ctx, 'posts', all, 'status', ['published', 'failed']));
  const rows: Array<{ lag: number }> = (
    await ctx.db.raw(
      `select extract(epoch from published_at - scheduled_at) * 1000 as lag from posts where id = any(?) and status = 'published'`,
      [quietIds],
    )
  ).rows;
  const noisyIds = ids.filter((x) => !x.quiet).map((x) => x.id);
  let noisyDrainS: number | undefined;
  if (withNoisy && noisyIds.length) {
    const { rows: last } = await ctx.db.raw(`select max(published_at) as at from posts where id = any(?)`, [noisyIds]);
    noisyDrainS = last[0].at ? (new Date(last[0].at).getTime() - due.getTime()) / 1000 : undefined;
  }
  return { lagsMs: rows.map((r) => Number(r.lag)), noisyDrainS, unfinished, notes };
}

// ── Generation: jobs queued at once ──────────────────────────────────────────────────────────

const SOURCE =
  'We moved our release checklist into the deployment pipeline this quarter. Every deploy now runs the same twelve checks, ' +
  'from schema drift to feature-flag hygiene. Rollbacks dropped by half, and on-call pages after releases fell to monthly.';

async function generate(ctx: Ctx, t: Tenant, i: number): Promise<string> {
  const job = await api(ctx, t, 'POST', '/v1/posts/generations', {
    projectId: t.projectIds[0],
    source: { type: 'text', text: `${SOURCE} (#${i})` },
  });
  return job.id as string;
}

export async function generationPhase(ctx: Ctx, withNoisy: boolean): Promise<Phase> {
  const t0 = Date.now();
  // The noisy workspace's jobs are queued first: first come, first served would run them first.
  const noisyIds = withNoisy
    ? await pLimit(50).map(
        Array.from({ length: ctx.sizes.jobs }, (_, i) => i),
        (i) => generate(ctx, ctx.noisy, i),
      )
    : [];
  const quietIds = await Promise.all(ctx.quiet.map((t, i) => generate(ctx, t, i)));
  const all = [...noisyIds, ...quietIds];
  ctx.log(`${all.length} generation jobs accepted in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const unfinished = await waitDone(ctx, all.length, () => countIn(ctx, 'jobs', all, 'status', ['DONE', 'FAILED', 'CANCELLED']));
  const lag = async (ids: string[]) =>
    (
      await ctx.db.raw(
        `select extract(epoch from completed_at - created_at) * 1000 as lag, completed_at from jobs where id = any(?) and status = 'DONE'`,
        [ids],
      )
    ).rows as Array<{ lag: string; completed_at: Date }>;
  const quiet = await lag(quietIds);
  const noisy = withNoisy ? await lag(noisyIds) : [];
  const lastNoisy = Math.max(...noisy.map((r) => new Date(r.completed_at).getTime()));
  return {
    lagsMs: quiet.map((r) => Number(r.lag)),
    noisyDrainS: withNoisy && noisy.length ? (lastNoisy - t0) / 1000 : undefined,
    unfinished,
    notes: [],
  };
}

// ── Webhooks: a slow, failing endpoint beside healthy ones ───────────────────────────────────

export interface Receivers {
  healthyUrl: string;
  slowUrl: string;
  /** First receipt of each event id at a healthy endpoint (epoch ms). */
  received: Map<string, number>;
  slowRequests(): number;
  close(): Promise<void>;
}

/**
 * Two local receivers: the healthy one answers 204 at once and records when each event first
 * arrived; the noisy one answers after `slowMs` and fails every other request with a 500 (so its
 * failure streak never reaches the auto-disable and its retries keep coming).
 */
export async function startReceivers(slowMs: number): Promise<Receivers> {
  const received = new Map<string, number>();
  let slow = 0;
  const listen = async (server: Server) => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  };
  const healthy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      try {
        const id = JSON.parse(Buffer.concat(chunks).toString('utf8')).id as string;
        if (!received.has(id)) received.set(id, at);
      } catch {
        /* not an event */
      }
      res.writeHead(204).end();
    });
  });
  const noisy = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const n = ++slow;
      setTimeout(() => res.writeHead(n % 2 ? 500 : 204).end(), slowMs);
    });
  });
  const [healthyUrl, slowUrl] = [await listen(healthy), await listen(noisy)];
  const close = (s: Server) =>
    new Promise<void>((resolve) => {
      s.closeAllConnections();
      s.close(() => resolve());
    });
  return {
    healthyUrl,
    slowUrl,
    received,
    slowRequests: () => slow,
    close: async () => void (await Promise.all([close(healthy), close(noisy)])),
  };
}

export async function webhooksPhase(ctx: Ctx, withNoisy: boolean): Promise<Phase> {
  const { emitEvents } = await import('../../lib/outbox');
  if (withNoisy)
    for (let i = 0; i < ctx.sizes.events; i += 1000) {
      const n = Math.min(1000, ctx.sizes.events - i);
      await emitEvents(
        ctx.db,
        Array.from({ length: n }, (_, k) => ({ workspaceId: ctx.noisy.workspaceId, type: 'post.updated' as const, data: { n: i + k } })),
      );
    }
  // The quiet events come while the noisy endpoint is busy: its delivery pass is in flight
  // (every attempt slow, half of them failing) and its retries are due.
  if (withNoisy) {
    const busy = Date.now() + 15_000;
    while (ctx.receivers.slowRequests() < Math.min(50, ctx.sizes.events) && Date.now() < busy) await sleep(100);
  }
  // Then every quiet workspace's events, each workspace's in one commit, as its changes land.
  const emitted = new Map<string, number>();
  await Promise.all(
    ctx.quiet.map(async (t) => {
      const ids = await emitEvents(
        ctx.db,
        Array.from({ length: ctx.sizes.quietEvents }, (_, k) => ({
          workspaceId: t.workspaceId,
          type: 'post.updated' as const,
          data: { n: k },
        })),
      );
      const at = Date.now();
      for (const id of ids) emitted.set(id, at);
    }),
  );
  const slowBefore = ctx.receivers.slowRequests();
  const unfinished = await waitDone(
    ctx,
    emitted.size,
    async () => [...emitted.keys()].filter((id) => ctx.receivers.received.has(id)).length,
  );
  if (withNoisy)
    ctx.log(`the slow endpoint had ${ctx.receivers.slowRequests() - slowBefore} requests meanwhile (${ctx.sizes.events} events)`);
  return {
    lagsMs: [...emitted].filter(([id]) => ctx.receivers.received.has(id)).map(([id, at]) => ctx.receivers.received.get(id)! - at),
    unfinished,
    notes: [],
  };
}
