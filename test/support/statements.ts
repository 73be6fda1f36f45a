import pg from 'pg';

/** A statement as pg sends it: its text (numbered `$1, $2, …`) and its values. */
export interface SentStatement {
  text: string;
  values: unknown[];
}

/**
 * Runs `run` and returns what it resolved to with every statement this process sent meanwhile,
 * read at the pg driver (a prepared read and a knex query alike), in the order sent.
 */
export async function withStatementsSent<T>(run: () => Promise<T>): Promise<{ result: T; sent: SentStatement[] }> {
  const sent: SentStatement[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    const c = typeof config === 'string' ? { text: config, values: rest[0] } : (config as { text?: string; values?: unknown[] });
    sent.push({ text: c?.text ?? '', values: Array.isArray(c?.values) ? [...c.values] : [] });
    return (query as (...args: unknown[]) => unknown).call(this, config, ...rest);
  } as typeof query;
  try {
    return { result: await run(), sent };
  } finally {
    pg.Client.prototype.query = query;
  }
}
