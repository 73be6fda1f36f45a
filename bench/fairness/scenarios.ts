import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import type { Client } from '@temporalio/client';
import pLimit from 'p-limit';
import type { apiClient } from '../harness/stack';
import { postContent, prng, shuffle } from '../harness/content';
import { until } from '../harness/proc';
import { breakdown, timelines } from '../publishing/history';
import { startReceiver } from '../webhooks/receiver';

// The fairness bench's scenarios: the quiet workspaces' work, alone or beside the noisy one's burst.

export type Tenant = { id: string; key: string; projectIds: string[] };

/** The flags a phase reads (bench/fairness.ts): items per workspace, seconds to wait, the lead (0: from the creation rate). */
export type Sizes = Record<'burst' | 'quiet-posts' | 'jobs' | 'events' | 'quiet-events' | 'timeout' | 'lead', number>;

/** The quiet lags; the noisy work's first request (or due instant) to its last item done, s; items left at the timeout; for posts, where the quiet lag went. */
export type Phase = {
  lagsMs: number[];
  noisyDrainS?: number;
  unfinished: number;
  notes: string[];
  breakdown?: ReturnType<typeof breakdown>;
};

export interface Ctx {
  api: ReturnType<typeof apiClient>;
  db: Knex;
  temporal: Client;
  noisy: Tenant;
  quiet: Tenant[];
  sizes: Sizes;
  receivers: Receivers;
  /** Posts created a second in the last phase (the next phase's due minute leaves room for its creation). */
  createdPerS: number;
}

const log = (line: string) => console.log(`  ${line}`);

const api = (ctx: Ctx, t: Tenant, path: string, body: unknown): Promise<{ id: string }> => ctx.api.send('POST', path, t.key, body);

/** Polls until `done()` counts `n` or the timeout passes; answers how many were left. */
async function waitDone(ctx: Ctx, n: number, done: () => Promise<number>): Promise<number> {
  let d = 0;
  await until(async () => (d = await done()) >= n, ctx.sizes.timeout * 1000, 500);
  return Math.max(0, n - d);
}

const POSTS = { table: 'posts', ended: ['published', 'failed'], done: 'published', lag: 'published_at - scheduled_at', at: 'published_at' };
const JOBS = { table: 'jobs', ended: ['DONE', 'FAILED', 'CANCELLED'], done: 'DONE', lag: 'completed_at - created_at', at: 'completed_at' };

/** Until every row has an `ended` status: the quiet rows' lags (`lag`) and when after `fromMs` the last noisy one was `done` (`at`). */
async function settle(ctx: Ctx, q: typeof POSTS, quietIds: string[], noisyIds: string[], fromMs: number): Promise<Phase> {
  const all = [...quietIds, ...noisyIds];
  const ended = async () => Number((await ctx.db(q.table).whereIn('id', all).whereIn('status', q.ended).count('* as n').first())!.n);
  const unfinished = await waitDone(ctx, all.length, ended);
  const rows = async (ids: string[]) =>
    (
      await ctx.db.raw(
        `select extract(epoch from ${q.lag}) * 1000 as lag, ${q.at} as at from ${q.table} where id = any(?) and status = ?`,
        [ids, q.done],
      )
    ).rows as Array<{ lag: string; at: Date }>;
  const noisy = noisyIds.length ? await rows(noisyIds) : [];
  return {
    lagsMs: (await rows(quietIds)).map((r) => Number(r.lag)),
    noisyDrainS: noisy.length ? (Math.max(...noisy.map((r) => new Date(r.at).getTime())) - fromMs) / 1000 : undefined,
    unfinished,
    notes: [],
  };
}

// ── Publishing: posts due in the same minute ─────────────────────────────────────────────────

export async function publishingPhase(ctx: Ctx, withNoisy: boolean): Promise<Phase> {
  const rand = prng(withNoisy ? 2 : 1);
  const items: Array<{ t: Tenant; projectId: string; quiet: boolean }> = [];
  const add = (t: Tenant, n: number, quiet: boolean) => {
    for (let i = 0; i < n; i++) items.push({ t, projectId: t.projectIds[i % t.projectIds.length]!, quiet });
  };
  for (const t of ctx.quiet) add(t, ctx.sizes['quiet-posts'], true);
  if (withNoisy) add(ctx.noisy, ctx.sizes.burst, false);
  // A random interleaving: the start delay holds every workflow to the minute, whatever the order of creation.
  shuffle(items, rand);
  // Room for creating every post at the last phase's rate, and half again.
  const leadMs = (ctx.sizes.lead || 15 + (1.5 * items.length) / ctx.createdPerS) * 1000;
  const t0 = Date.now();
  const due = new Date(Math.ceil((t0 + leadMs) / 1000) * 1000);
  const ids: Record<'quiet' | 'noisy', string[]> = { quiet: [], noisy: [] };
  await pLimit(20).map(items, async (item) => {
    const post = await api(ctx, item.t, '/v1/posts', {
      projectId: item.projectId,
      content: postContent(rand),
      scheduledFor: due.toISOString(),
    });
    ids[item.quiet ? 'quiet' : 'noisy'].push(post.id);
  });
  const createdBy = Date.now();
  ctx.createdPerS = items.length / Math.max(0.001, (createdBy - t0) / 1000);
  log(
    `${items.length} posts created in ${((createdBy - t0) / 1000).toFixed(1)} s, due ${due.toISOString().slice(11, 19)} (${((due.getTime() - createdBy) / 1000).toFixed(1)} s later)`,
  );
  const phase = await settle(ctx, POSTS, ids.quiet, ids.noisy, due.getTime());
  const { workflowIds } = await import('../../lib/temporal/client');
  const quietTimelines = await timelines(
    ctx.temporal,
    ids.quiet.map((id) => ({ workflowId: workflowIds.publish(id), postId: id, dueMs: due.getTime() })),
  );
  phase.breakdown = breakdown(quietTimelines.ok);
  if (quietTimelines.errors) phase.notes.push(`${quietTimelines.errors} quiet publish workflow histories could not be read`);
  if (createdBy > due.getTime())
    phase.notes.push(`creation ended ${((createdBy - due.getTime()) / 1000).toFixed(1)} s after the due minute: raise --lead`);
  return phase;
}

// ── Generation: jobs queued at once ──────────────────────────────────────────────────────────

const SOURCE =
  'We moved our release checklist into the deployment pipeline this quarter. Every deploy now runs the same twelve checks, ' +
  'from schema drift to feature-flag hygiene. Rollbacks dropped by half, and on-call pages after releases fell to monthly.';

const generate = async (ctx: Ctx, t: Tenant, i: number) =>
  (await api(ctx, t, '/v1/posts/generations', { projectId: t.projectIds[0], source: { type: 'text', text: `${SOURCE} (#${i})` } })).id;

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
  log(`${noisyIds.length + quietIds.length} generation jobs accepted in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return settle(ctx, JOBS, quietIds, noisyIds, t0);
}

// ── Webhooks: a slow, failing endpoint beside healthy ones ───────────────────────────────────

export type Receivers = Awaited<ReturnType<typeof startReceivers>>;

/** The healthy receiver answers 204 and records when each Webhook-Id first arrived; the noisy one answers after `slowMs`, every other time 500 (never auto-disabled). */
export async function startReceivers(slowMs: number) {
  const received = new Map<string, number>();
  let slow = 0;
  const healthy = (
    await startReceiver(
      () => '',
      (r) => void (r.webhookId && !received.has(r.webhookId) && received.set(r.webhookId, r.at)),
    )
  ).server;
  const noisy = createServer((req, res) =>
    req.resume().on('end', () => {
      const n = ++slow;
      setTimeout(() => res.writeHead(n % 2 ? 500 : 204).end(), slowMs);
    }),
  );
  await new Promise<void>((resolve) => noisy.listen(0, '127.0.0.1', resolve));
  const url = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  const close = (server: Server) => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return {
    healthyUrl: url(healthy),
    slowUrl: url(noisy),
    received,
    slowRequests: () => slow,
    close: async () => void (await Promise.all([close(healthy), close(noisy)])),
  };
}

export async function webhooksPhase(ctx: Ctx, withNoisy: boolean): Promise<Phase> {
  const { emitEvents } = await import('../../lib/outbox');
  const events = (t: Tenant, from: number, n: number) =>
    emitEvents(
      ctx.db,
      Array.from({ length: n }, (_, k) => ({ workspaceId: t.id, type: 'post.updated' as const, data: { n: from + k } })),
    );
  const { receivers } = ctx;
  if (withNoisy) {
    for (let i = 0; i < ctx.sizes.events; i += 1000) await events(ctx.noisy, i, Math.min(1000, ctx.sizes.events - i));
    // The quiet events come while the noisy endpoint's slow, failing deliveries and retries are in flight.
    await until(async () => receivers.slowRequests() >= Math.min(50, ctx.sizes.events), 15_000, 100);
  }
  // Then every quiet workspace's events, each workspace's in one commit, as its changes land.
  const emitted = new Map<string, number>();
  await Promise.all(
    ctx.quiet.map(async (t) => {
      const ids = await events(t, 0, ctx.sizes['quiet-events']);
      const at = Date.now();
      for (const id of ids) emitted.set(id, at);
    }),
  );
  const slowBefore = receivers.slowRequests();
  const unfinished = await waitDone(ctx, emitted.size, async () => [...emitted.keys()].filter((id) => receivers.received.has(id)).length);
  if (withNoisy) log(`the slow endpoint had ${receivers.slowRequests() - slowBefore} requests meanwhile (${ctx.sizes.events} events)`);
  return {
    lagsMs: [...emitted].filter(([id]) => receivers.received.has(id)).map(([id, at]) => receivers.received.get(id)! - at),
    unfinished,
    notes: [],
  };
}
