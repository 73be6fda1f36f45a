import type pg from 'pg';
import { TX_CONTROL, wireValues, type CapturedStatement } from '../harness/statements';

/**
 * The plans Postgres runs a captured statement with, as the API sends it: with its values, and for
 * a prepared statement (lib/db.ts readPrepared) its generic plan too (bench/README.md, "reads").
 */
export async function plansAsSent(client: pg.ClientBase, s: CapturedStatement, opts: { analyze?: boolean } = {}): Promise<string[]> {
  const values = wireValues(s);
  const explain = opts.analyze ? 'explain (analyze, buffers)' : 'explain';
  const text = (r: pg.QueryResult) => (r.rows as Array<{ 'QUERY PLAN': string }>).map((row) => row['QUERY PLAN']).join('\n');
  const custom = text(await client.query(`${explain} ${s.text}`, values));
  if (!s.name) return [custom];
  await client.query('deallocate all');
  await client.query(`prepare plan_check as ${s.text}`);
  try {
    await client.query('set plan_cache_mode = force_generic_plan');
    // EXECUTE takes no bound parameters: the values go in as literals (their wire text).
    const args = values
      .map((v) => (v === null ? 'null' : (client as pg.Client).escapeLiteral(Buffer.isBuffer(v) ? v.toString() : String(v))))
      .join(', ');
    return [custom, text(await client.query(`${explain} execute plan_check${values.length ? `(${args})` : ''}`))];
  } finally {
    await client.query('reset plan_cache_mode');
    await client.query('deallocate plan_check');
  }
}

/** The index scans of a plan on `table` (by the index's name for a bitmap scan: `<table>_…`), with their index conditions. */
export function indexScansOn(plan: string, table: string): Array<{ index: string; cond: string }> {
  const lines = plan.split('\n');
  return lines.flatMap((line, i) => {
    const [, index = '', on] =
      /Index (?:Only )?Scan(?: Backward)? using (\S+) on (\S+)/.exec(line) ?? /Bitmap Index Scan on (\S+)()/.exec(line) ?? [];
    if (!index || (on ? on !== table : !index.startsWith(`${table}_`))) return [];
    return [{ index, cond: /^\s*Index Cond: (.*)$/.exec(lines[i + 1] ?? '')?.[1] ?? '' }];
  });
}

/** EXPLAIN (ANALYZE, BUFFERS) of each statement as sent (plansAsSent), printed: the reads bench's --explain. */
export async function explainAsSent(pool: pg.Pool, statements: readonly CapturedStatement[]) {
  const client = await pool.connect();
  try {
    for (const s of statements) {
      if (TX_CONTROL.test(s.text)) continue;
      console.log(`    ${s.name ? 'prepared' : 'unnamed'}: ${s.text.replace(/\s+/g, ' ')}`);
      for (const [i, p] of (await plansAsSent(client, s, { analyze: true })).entries())
        console.log(`      ${i ? 'generic plan' : 'with its values'}:\n${p.replace(/^/gm, '        ')}`);
    }
  } finally {
    client.release();
  }
}
