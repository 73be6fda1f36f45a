import type pg from 'pg';
import { lagSummary } from '../publishing/measure';
import { DRAIN_DEADLINE_MS } from './settings';
import { until } from './stack';

// Reading back what went out: each post due within the run against its posts row and the
// network simulator's record of it (one network post per reference = post id), and every post
// that must not have gone out (unscheduled, or not due yet).

export type Expectation = 'A' | 'B' | 'C-moved' | 'moved-in';

export interface Expected {
  kind: Expectation;
  /** Not to be published before this instant (its due time, or its new time after a reschedule). */
  notBeforeMs: number;
}

export interface Outcome {
  lag: Record<'A' | 'B', ReturnType<typeof lagSummary>>;
  networkLag: Record<'A' | 'B', ReturnType<typeof lagSummary>>;
  /** Due within the run, not published by its deadline. */
  lost: number;
  lostByKind: Record<string, number>;
  /** References with more than one post on the network. */
  duplicated: number;
  /** Published (row or network) although unscheduled before its due time. */
  publishedAfterUnschedule: number;
  /** Published (row or network) before its due or new time. */
  publishedEarly: number;
  /** Published although neither due within the run nor expected. */
  stray: number;
  networkPosts: number;
  publishedRows: number;
}

interface SimPostLike {
  reference?: string | null;
  receivedAt: string;
}

export async function readBack(
  mon: pg.Client,
  sim: { listPosts(f: { limit: number }): Promise<{ posts: SimPostLike[] }> },
  expected: Map<string, Expected>,
  unscheduled: Set<string>,
  deadlineMs: number,
): Promise<Outcome> {
  const { rows } = await mon.query<{ id: string; published_at: Date }>(
    `select id, published_at from posts where status = 'published' and published_at is not null`,
  );
  const publishedAt = new Map(rows.map((r) => [r.id, r.published_at.getTime()]));
  const net = (await sim.listPosts({ limit: 1_000_000 })).posts;
  const perRef = new Map<string, { n: number; firstMs: number }>();
  for (const p of net) {
    if (!p.reference) continue;
    const at = Date.parse(p.receivedAt);
    const e = perRef.get(p.reference);
    if (e) {
      e.n++;
      e.firstMs = Math.min(e.firstMs, at);
    } else perRef.set(p.reference, { n: 1, firstMs: at });
  }

  const lags: Record<'A' | 'B', number[]> = { A: [], B: [] };
  const netLags: Record<'A' | 'B', number[]> = { A: [], B: [] };
  const lostByKind: Record<string, number> = {};
  let lost = 0;
  let early = 0;
  for (const [id, e] of expected) {
    const at = publishedAt.get(id);
    const onNet = perRef.get(id);
    if (at === undefined || !onNet) {
      lost++;
      lostByKind[e.kind] = (lostByKind[e.kind] ?? 0) + 1;
      // A lost post counts with the deadline as its lag, so the percentiles stay a lower bound.
      if (e.kind === 'A' || e.kind === 'B') lags[e.kind].push(deadlineMs);
      continue;
    }
    if (at < e.notBeforeMs || onNet.firstMs < e.notBeforeMs) early++;
    if (e.kind === 'A' || e.kind === 'B') {
      lags[e.kind].push(at - e.notBeforeMs);
      netLags[e.kind].push(onNet.firstMs - e.notBeforeMs);
    }
  }
  let duplicated = 0;
  for (const e of perRef.values()) if (e.n > 1) duplicated++;
  let afterUnschedule = 0;
  for (const id of unscheduled) if (publishedAt.has(id) || perRef.has(id)) afterUnschedule++;
  let stray = 0;
  const seen = new Set<string>([...publishedAt.keys(), ...perRef.keys()]);
  for (const id of seen) if (!expected.has(id) && !unscheduled.has(id)) stray++;
  return {
    lag: { A: lagSummary(lags.A), B: lagSummary(lags.B) },
    networkLag: { A: lagSummary(netLags.A), B: lagSummary(netLags.B) },
    lost,
    lostByKind,
    duplicated,
    publishedAfterUnschedule: afterUnschedule,
    publishedEarly: early,
    stray,
    networkPosts: net.length,
    publishedRows: rows.length,
  };
}

/** How many of `ids` are published now (the posts table). */
export async function publishedCount(mon: pg.Client, ids: string[]): Promise<number> {
  const { rows } = await mon.query<{ n: number }>(`select count(*)::int as n from posts where id = any($1) and status = 'published'`, [
    ids,
  ]);
  return rows[0]!.n;
}

/** Sleeps to `dueMs`, then polls until every one of `ids` is published or the drain deadline passes; answers how many are. */
export async function drain(mon: pg.Client, ids: string[], dueMs: number, label: string): Promise<number> {
  if (Date.now() < dueMs) await new Promise((r) => setTimeout(r, dueMs - Date.now()));
  let n = 0;
  await until(
    async () => (n = await publishedCount(mon, ids)) >= ids.length || Date.now() > dueMs + DRAIN_DEADLINE_MS,
    DRAIN_DEADLINE_MS + 5_000,
    500,
  );
  console.log(
    `• ${label}: ${n.toLocaleString('en-US')}/${ids.length.toLocaleString('en-US')} published by t=${((Date.now() - dueMs) / 1000).toFixed(1)} s after due`,
  );
  return n;
}
