import assert from 'node:assert/strict';
import { db } from '../../lib/db';

/** A statement as knex sent it, with the transaction it ran in (none: outside one). */
export interface SentStatement {
  sql: string;
  bindings: unknown[];
  txId: string | undefined;
}

/** The statements `fn` sends through the shared pool, in order; `fn` sees them as they are sent. */
export async function statementsOf(fn: (sent: readonly SentStatement[]) => Promise<unknown>): Promise<SentStatement[]> {
  const sent: SentStatement[] = [];
  const onQuery = (q: { sql: string; bindings?: unknown[]; __knexTxId?: string }) =>
    sent.push({ sql: q.sql, bindings: q.bindings ?? [], txId: q.__knexTxId });
  db().on('query', onQuery);
  try {
    await fn(sent);
  } finally {
    db().removeListener('query', onQuery);
  }
  return sent;
}

/**
 * The statement that includes `scan` ran in a transaction that had first told the planner to
 * read through indexes (lib/workspaceTurns.ts readThroughIndexes); answers that statement.
 */
export function assertReadThroughIndexes(sent: SentStatement[], scan: string): SentStatement {
  const at = sent.findIndex((s) => s.sql.includes(scan));
  assert.ok(at >= 0, `no statement includes ${scan}: ${sent.map((s) => s.sql).join('\n')}`);
  const statement = sent[at]!;
  assert.ok(statement.txId, 'the scan runs in a transaction');
  assert.ok(
    sent.slice(0, at).some((s) => s.txId === statement.txId && s.sql.includes('enable_bitmapscan')),
    'the transaction reads through indexes before the scan',
  );
  return statement;
}
