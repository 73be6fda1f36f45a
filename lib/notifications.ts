import type { Knex } from 'knex';
import type pg from 'pg';

// Postgres NOTIFY as a wake-up for code that would otherwise poll a table: a statement (or a
// trigger) sends `NOTIFY <channel>, '<key>'`, and whoever waits for that key wakes at once.
// The table stays the truth: a waiter always reads it again after waking, and wakes after its
// own time limit too, so a notification lost with a connection only makes it late.

/** One subscriber's wake-ups for its key. */
export interface Wake {
  /** Forgets a wake-up that arrived before now (call before asking the table). */
  take(): void;
  /** Resolves true on a wake-up (or one that arrived since `take`), false after `ms` or once `signal` aborts. */
  next(ms: number, signal?: AbortSignal): Promise<boolean>;
  close(): void;
}

/**
 * One LISTEN connection for `channel` per process, shared by every subscriber of any key, held
 * from the pool only while one is subscribed. `subscribe` answers null when LISTEN failed: the
 * caller falls back to what it did without a wake-up (poll, or end).
 */
export function keyedListener(db: Knex, channel: string) {
  const waiters = new Map<string, Set<() => void>>();
  let conn: pg.Client | null = null;
  let opening: Promise<void> | null = null;
  let users = 0;
  const onNotify = (msg: pg.Notification) => {
    for (const w of waiters.get(msg.payload ?? '') ?? []) w();
  };
  // A connection lost while listening (Postgres restarted) is given back to the pool, which
  // discards it, and the next subscriber listens on a fresh one; until then subscribers wake on
  // their own time limits.
  const onLost = () => {
    const c = conn;
    if (!c) return;
    conn = null;
    c.removeListener('notification', onNotify);
    c.removeListener('error', onLost);
    c.removeListener('end', onLost);
    db.client.releaseConnection(c);
  };
  const open = async () => {
    if (conn) return;
    opening ??= (async () => {
      const c = (await db.client.acquireConnection()) as pg.Client;
      c.on('notification', onNotify);
      try {
        await c.query(`LISTEN ${channel}`);
      } catch (err) {
        c.removeListener('notification', onNotify);
        db.client.releaseConnection(c);
        throw err;
      }
      c.once('error', onLost);
      c.once('end', onLost);
      conn = c;
    })().finally(() => {
      opening = null;
    });
    await opening;
  };
  const release = async () => {
    if (users > 0 || !conn) return;
    const c = conn;
    conn = null;
    c.removeListener('notification', onNotify);
    c.removeListener('error', onLost);
    c.removeListener('end', onLost);
    await c.query(`UNLISTEN ${channel}`).catch(() => undefined);
    db.client.releaseConnection(c);
  };
  return {
    async subscribe(key: string): Promise<Wake | null> {
      let pending = false;
      let wakeUp: (() => void) | null = null;
      const fn = () => {
        pending = true;
        wakeUp?.();
      };
      users++;
      const set = waiters.get(key) ?? new Set();
      set.add(fn);
      waiters.set(key, set);
      const close = () => {
        set.delete(fn);
        if (!set.size && waiters.get(key) === set) waiters.delete(key);
        users--;
        void release();
      };
      try {
        await open();
      } catch {
        close();
        return null;
      }
      return {
        take() {
          pending = false;
        },
        next(ms: number, signal?: AbortSignal) {
          if (pending) {
            pending = false;
            return Promise.resolve(true);
          }
          if (signal?.aborted) return Promise.resolve(false);
          return new Promise<boolean>((resolve) => {
            const end = (woken: boolean) => {
              clearTimeout(timer);
              signal?.removeEventListener('abort', onAbort);
              wakeUp = null;
              if (woken) pending = false;
              resolve(woken);
            };
            const onAbort = () => end(false);
            const timer = setTimeout(() => end(false), ms);
            signal?.addEventListener('abort', onAbort, { once: true });
            wakeUp = () => end(true);
          });
        },
        close,
      };
    },
  };
}
