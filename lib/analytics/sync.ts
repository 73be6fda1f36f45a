import type { Knex } from 'knex';
import { config } from '../config';
import type { NetworkClient } from '../network/client';
import { isNetworkError, type NetworkError } from '../network/errors';
import { connectionToken, recordCall } from '../publishing/probe';

// The metrics sync (docs/analytics.md "Sync"): claims published posts whose next sample is due,
// reads their metrics from the network through the shared client, and writes one sample plus
// the latest totals per post. The cadence decays with the post's age.

const HOUR = 3_600_000;

/** spec-free choice, documented: often in the first day, rarely later, never after 90 days. */
export const CADENCE: ReadonlyArray<{ ageBelowMs: number; everyMs: number }> = [
  { ageBelowMs: 24 * HOUR, everyMs: 1 * HOUR },
  { ageBelowMs: 7 * 24 * HOUR, everyMs: 6 * HOUR },
  { ageBelowMs: 30 * 24 * HOUR, everyMs: 24 * HOUR },
  { ageBelowMs: 90 * 24 * HOUR, everyMs: 7 * 24 * HOUR },
];
/** A post whose connection cannot be used is looked at again after this long. */
const BLOCKED_RECHECK_MS = 6 * HOUR;

/** When the post is due next, or null once the cadence has ended (age 90 days or more). */
export function nextSyncAt(publishedAt: Date, now: Date, divisor = config.analytics.cadenceDivisor): Date | null {
  const age = (now.getTime() - publishedAt.getTime()) * divisor;
  const step = CADENCE.find((c) => age < c.ageBelowMs);
  return step ? new Date(now.getTime() + step.everyMs / divisor) : null;
}

export interface SyncResult {
  claimed: number;
  synced: number;
  blocked: number;
  failed: number;
  deferred: number;
  discovered: number;
}

interface DueRow {
  post_id: string;
  workspace_id: string;
  project_id: string;
  network_post_urn: string;
  published_at: Date;
  connection_id: string | null;
  connection_status: string | null;
  revoked_at: Date | null;
  has_token: boolean;
  timezone: string;
  impressions: number;
  reactions: number;
  comments: number;
  reshares: number;
}

const localDay = (at: Date, timeZone: string) =>
  new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);

/**
 * Rebuilds a project's daily gains from its samples (after a bulk import, or when its timezone
 * changed): per post and local day the last counters, minus the post's previous day's.
 */
export async function rebuildDailyGains(db: Knex, projectId: string): Promise<void> {
  await db.transaction(async (trx) => {
    await trx('post_metric_days').where({ project_id: projectId }).delete();
    await trx.raw(
      `insert into post_metric_days (project_id, day, workspace_id, impressions, reactions, comments, reshares)
       with pts as (
         select s.post_id, s.workspace_id, (s.sampled_at at time zone pr.timezone)::date as day,
                max(s.impressions) as i, max(s.reactions) as r, max(s.comments) as c, max(s.reshares) as sh
           from post_metric_samples s join projects pr on pr.id = s.project_id
          where s.project_id = ? group by s.post_id, s.workspace_id, day),
       gains as (
         select day, workspace_id, i - coalesce(lag(i) over w, 0) as di, r - coalesce(lag(r) over w, 0) as dr,
                c - coalesce(lag(c) over w, 0) as dc, sh - coalesce(lag(sh) over w, 0) as dsh
           from pts window w as (partition by post_id order by day))
       select ?, day, min(workspace_id), greatest(sum(di), 0), greatest(sum(dr), 0), greatest(sum(dc), 0), greatest(sum(dsh), 0) from gains group by day`,
      [projectId, projectId],
    );
  });
}

/** Published posts with a network URN that have no sync state yet get one, due now. */
export async function discoverPublished(db: Knex, now = new Date(), projectIds?: readonly string[]): Promise<number> {
  const horizon = new Date(now.getTime() - (90 * 24 * HOUR) / config.analytics.cadenceDivisor);
  const only = projectIds ? 'and p.project_id = any(?)' : '';
  const r = await db.raw(
    `insert into post_metric_state (post_id, workspace_id, project_id, network_post_urn, published_at, next_sync_at, sync_state)
     select p.id, p.workspace_id, p.project_id, p.network_post_urn, coalesce(p.published_at, p.scheduled_at, p.created_at), ?, 'pending'
       from posts p
      where p.status = 'published' and p.network_post_urn is not null and p.project_id is not null ${only}
        and coalesce(p.published_at, p.scheduled_at, p.created_at) >= ?
        and not exists (select 1 from post_metric_state s where s.post_id = p.id)
     on conflict (post_id) do nothing`,
    projectIds ? [now, [...projectIds], horizon] : [now, horizon],
  );
  return r.rowCount ?? 0;
}

async function mapLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/**
 * One sync pass over at most `batch` due posts. Failure rules (docs/analytics.md); every call's
 * outcome goes to the connection's streak through the one rule (lib/publishing/probe.ts):
 * - a connection without a usable token (none, revoked, refresh refused) gets no metrics call:
 *   its posts read `blocked` and are looked at again later; a refused refresh revokes (rule 3);
 * - an auth failure of the network counts once per connection per pass (spec 3.4: three
 *   consecutive failures revoke) and stops that connection's posts for the pass (`blocked`);
 * - a transient failure (429, 5xx, timeout) stops that connection for the pass and leaves its
 *   posts due (after Retry-After when given); it is not counted (the network asked us to wait)
 *   but shows the connection `degraded` until its next success (rule 4);
 * - a post the network no longer serves (404/403) stops being synced (`failed`).
 */
export async function syncDueMetrics(
  deps: { db: Knex; network: NetworkClient },
  /** `projectIds` limits a pass to those projects (a targeted re-sync; tests). */
  opts: { batch?: number; concurrency?: number; now?: Date; projectIds?: readonly string[] } = {},
): Promise<SyncResult> {
  const { db, network } = deps;
  const now = opts.now ?? new Date();
  const batch = opts.batch ?? config.analytics.syncBatch;
  const discovered = await discoverPublished(db, now, opts.projectIds);

  // Claim due rows: pushing next_sync_at forward first means two concurrent passes never read
  // the same post; a pass that dies leaves them due again after the lease.
  const lease = new Date(now.getTime() + 10 * 60_000);
  const only = opts.projectIds ? 'and project_id = any(?)' : '';
  const claimed = (
    await db.raw(
      `with due as (
       select post_id from post_metric_state where next_sync_at <= ? ${only} order by next_sync_at limit ? for update skip locked)
     update post_metric_state s set next_sync_at = ? from due where s.post_id = due.post_id
     returning s.post_id`,
      opts.projectIds ? [now, [...opts.projectIds], batch, lease] : [now, batch, lease],
    )
  ).rows as Array<{ post_id: string }>;
  const result: SyncResult = { claimed: claimed.length, synced: 0, blocked: 0, failed: 0, deferred: 0, discovered };
  if (claimed.length === 0) return result;

  const rows = (await db('post_metric_state as s')
    .join('projects as p', 'p.id', 's.project_id')
    .leftJoin('network_connections as c', 'c.id', 'p.connection_id')
    .whereIn(
      's.post_id',
      claimed.map((c) => c.post_id),
    )
    .select(
      's.post_id',
      's.workspace_id',
      's.project_id',
      's.network_post_urn',
      's.published_at',
      'p.connection_id',
      'c.connection_status',
      'c.revoked_at',
      'p.timezone',
      's.impressions',
      's.reactions',
      's.comments',
      's.reshares',
      db.raw('c.access_token_enc is not null as has_token'),
    )) as DueRow[];
  // Gains per project and local day, added to post_metric_days with this pass's samples.
  const gains = new Map<
    string,
    { project_id: string; day: string; workspace_id: string; impressions: number; reactions: number; comments: number; reshares: number }
  >();
  const byConnection = new Map<string, DueRow[]>();
  for (const r of rows) byConnection.set(r.connection_id ?? '', [...(byConnection.get(r.connection_id ?? '') ?? []), r]);

  const samples: Array<Record<string, unknown>> = [];
  const setState = async (postIds: string[], patch: Record<string, unknown>) => {
    if (postIds.length) await db('post_metric_state').whereIn('post_id', postIds).update(patch);
  };

  await mapLimit(
    [...byConnection.entries()],
    Math.max(1, Math.ceil((opts.concurrency ?? config.analytics.syncConcurrency) / 2)),
    async ([connectionId, posts]) => {
      const block = async (reason: string) => {
        result.blocked += posts.length;
        await setState(
          posts.map((p) => p.post_id),
          {
            sync_state: 'blocked',
            last_error: reason.slice(0, 500),
            next_sync_at: new Date(now.getTime() + BLOCKED_RECHECK_MS / config.analytics.cadenceDivisor),
          },
        );
      };
      if (!connectionId) return block('The project has no network connection.');
      const step = await db.transaction((trx) => connectionToken(trx, network, connectionId));
      if (!step.ok) {
        const { failure } = step;
        if (isNetworkError(failure) && failure.kind === 'transient') {
          result.deferred += posts.length;
          return setState(
            posts.map((p) => p.post_id),
            { next_sync_at: new Date(now.getTime() + (failure.retryAfterMs ?? 60_000)) },
          );
        }
        return block(failure.message);
      }
      const { token } = step;

      let stopped: NetworkError | null = null;
      let anySuccess = false;
      const pending = [...posts];
      await mapLimit(posts, Math.max(1, opts.concurrency ?? config.analytics.syncConcurrency), async (post) => {
        if (stopped) return;
        try {
          const m = await network.getPostMetrics(token, post.network_post_urn);
          if (stopped) return;
          anySuccess = true;
          pending.splice(pending.indexOf(post), 1);
          const at = new Date();
          samples.push({
            post_id: post.post_id,
            workspace_id: post.workspace_id,
            project_id: post.project_id,
            sampled_at: at,
            impressions: m.impressions,
            reactions: m.likes,
            comments: m.comments,
            reshares: m.reshares,
          });
          const day = localDay(at, post.timezone);
          const g = gains.get(`${post.project_id}|${day}`) ?? {
            project_id: post.project_id,
            day,
            workspace_id: post.workspace_id,
            impressions: 0,
            reactions: 0,
            comments: 0,
            reshares: 0,
          };
          // A counter the network lowers (a removed reaction) gains nothing rather than a negative.
          g.impressions += Math.max(0, m.impressions - Number(post.impressions));
          g.reactions += Math.max(0, m.likes - Number(post.reactions));
          g.comments += Math.max(0, m.comments - Number(post.comments));
          g.reshares += Math.max(0, m.reshares - Number(post.reshares));
          gains.set(`${post.project_id}|${day}`, g);
          const next = nextSyncAt(post.published_at, at);
          await db('post_metric_state')
            .where({ post_id: post.post_id })
            .update({
              impressions: m.impressions,
              reactions: m.likes,
              comments: m.comments,
              reshares: m.reshares,
              samples: db.raw('samples + 1'),
              last_synced_at: at,
              next_sync_at: next,
              sync_state: next ? 'ok' : 'done',
              last_error: null,
            });
          result.synced++;
        } catch (err) {
          if (!isNetworkError(err)) throw err;
          if (err.kind === 'permanent') {
            pending.splice(pending.indexOf(post), 1);
            result.failed++;
            await setState([post.post_id], {
              sync_state: 'failed',
              last_error: `${err.code}: ${err.message}`.slice(0, 500),
              next_sync_at: null,
            });
            return;
          }
          stopped ??= err;
        }
      });

      if (stopped) {
        const s = stopped as NetworkError;
        // One outcome per connection per pass, however many posts it stopped.
        await recordCall(db, connectionId, 'read', s);
        if (s.kind === 'auth') {
          result.blocked += pending.length;
          await setState(
            pending.map((p) => p.post_id),
            {
              sync_state: 'blocked',
              last_error: `${s.code}: ${s.message}`.slice(0, 500),
              next_sync_at: new Date(now.getTime() + BLOCKED_RECHECK_MS / config.analytics.cadenceDivisor),
            },
          );
        } else {
          result.deferred += pending.length;
          await setState(
            pending.map((p) => p.post_id),
            { next_sync_at: new Date(Date.now() + (s.retryAfterMs ?? 60_000)) },
          );
        }
      }
      if (anySuccess && !stopped) await recordCall(db, connectionId, 'read', 'ok');
    },
  );

  await db.transaction(async (trx) => {
    for (let i = 0; i < samples.length; i += 1000)
      await trx('post_metric_samples')
        .insert(samples.slice(i, i + 1000))
        .onConflict(['post_id', 'sampled_at'])
        .ignore();
    if (gains.size) {
      await trx('post_metric_days')
        .insert([...gains.values()])
        .onConflict(['project_id', 'day'])
        .merge({
          impressions: trx.raw('post_metric_days.impressions + excluded.impressions'),
          reactions: trx.raw('post_metric_days.reactions + excluded.reactions'),
          comments: trx.raw('post_metric_days.comments + excluded.comments'),
          reshares: trx.raw('post_metric_days.reshares + excluded.reshares'),
        });
    }
  });
  return result;
}
