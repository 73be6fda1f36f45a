import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { until } from '../harness/proc';
import { lagSummary, networkPosts } from '../harness/stack';
import { DRAIN_DEADLINE_MS } from './settings';

// Reading back what went out: the posts rows and the network simulator's posts (one per
// reference = post id) against what was due and what must not have gone out.

/** A post due within the run, not to be published before `notBeforeMs` (its due time, or its new time after a reschedule). */
export type Expected = { kind: 'A' | 'B' | 'C-moved' | 'moved-in'; notBeforeMs: number };

export type Outcome = Awaited<ReturnType<typeof readBack>>;

export async function readBack(
  mon: pg.Client,
  sim: Parameters<typeof networkPosts>[0],
  expected: Map<string, Expected>,
  unscheduled: Set<string>,
) {
  const { rows } = await mon.query<{ id: string; published_at: Date }>(
    `select id, published_at from posts where status = 'published' and published_at is not null`,
  );
  const publishedAt = new Map(rows.map((r) => [r.id, r.published_at.getTime()]));
  const { posts: net, byRef: perRef } = await networkPosts(sim);

  const lags: Record<'A' | 'B', number[]> = { A: [], B: [] };
  const netLags: Record<'A' | 'B', number[]> = { A: [], B: [] };
  const lostByKind: Record<string, number> = {};
  let lost = 0;
  let early = 0;
  for (const [id, e] of expected) {
    const at = publishedAt.get(id);
    const onNet = perRef.get(id);
    const slice = e.kind === 'A' || e.kind === 'B' ? e.kind : null;
    if (at === undefined || !onNet) {
      lost++;
      lostByKind[e.kind] = (lostByKind[e.kind] ?? 0) + 1;
      // A lost post counts with the deadline as its lag, so the percentiles stay a lower bound.
      if (slice) lags[slice].push(DRAIN_DEADLINE_MS);
      continue;
    }
    if (at < e.notBeforeMs || onNet.firstMs < e.notBeforeMs) early++;
    if (slice) {
      lags[slice].push(at - e.notBeforeMs);
      netLags[slice].push(onNet.firstMs - e.notBeforeMs);
    }
  }
  const seen = new Set<string>([...publishedAt.keys(), ...perRef.keys()]);
  return {
    lag: { A: lagSummary(lags.A), B: lagSummary(lags.B) },
    networkLag: { A: lagSummary(netLags.A), B: lagSummary(netLags.B) },
    lost,
    lostByKind,
    duplicated: [...perRef.values()].filter((e) => e.n > 1).length,
    publishedAfterUnschedule: [...unscheduled].filter((id) => seen.has(id)).length,
    publishedEarly: early,
    stray: [...seen].filter((id) => !expected.has(id) && !unscheduled.has(id)).length,
    networkPosts: net.length,
    publishedRows: rows.length,
  };
}

/** Sleeps to `dueMs`, then polls until every one of `ids` is published or the drain deadline passes; answers how many are. */
export async function drain(mon: pg.Client, ids: string[], dueMs: number, label: string): Promise<number> {
  if (Date.now() < dueMs) await sleep(dueMs - Date.now());
  let n = 0;
  const published = async () =>
    (await mon.query<{ n: number }>(`select count(*)::int as n from posts where id = any($1) and status = 'published'`, [ids])).rows[0]!.n;
  await until(async () => (n = await published()) >= ids.length || Date.now() > dueMs + DRAIN_DEADLINE_MS, DRAIN_DEADLINE_MS + 5_000, 500);
  console.log(
    `• ${label}: ${n.toLocaleString('en-US')}/${ids.length.toLocaleString('en-US')} published by t=${((Date.now() - dueMs) / 1000).toFixed(1)} s after due`,
  );
  return n;
}
