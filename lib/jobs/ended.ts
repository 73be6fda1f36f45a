import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import { pool } from '../db';
import { keyedListener } from '../notifications';

// Waiting for a job to end (spec 4.4 wait_for_completion_ms; MCP tasks/result): the job's row
// says when it has, and `NOTIFY jobs_ended, '<job id>'` (migration 20261202100200) says when to
// read it again, so a waiting request costs one read when it starts, one when the job ends and
// one per `recheckMs`, instead of a read every few hundred milliseconds for as long as it waits.

let listener: { db: Knex; listen: ReturnType<typeof keyedListener> } | undefined;

/** The process's listener of `jobs_ended`, on its pool (made again when the pool is). */
function jobsEnded() {
  const db = pool();
  if (listener?.db !== db) listener = { db, listen: keyedListener(db, 'jobs_ended') };
  return listener.listen;
}

/**
 * Reads `read()` until `done` holds of what it answered, `deadline` (epoch ms) passes or `signal`
 * aborts; answers the last read. Between reads it waits for the job's end to be announced, and
 * at most `recheckMs`: a notification lost with its connection makes the answer late by that
 * much, never wrong. Without a listener (LISTEN failed) it reads every `recheckMs`.
 */
export async function readUntilJobEnds<T>(
  jobId: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  opts: { deadline: number; recheckMs: number; signal?: AbortSignal },
): Promise<T> {
  // Subscribed before the first read: an end committed between the read and the wait still wakes it.
  const wake = await jobsEnded().subscribe(jobId);
  try {
    for (;;) {
      wake?.take();
      const value = await read();
      const left = opts.deadline - Date.now();
      if (done(value) || left <= 0 || opts.signal?.aborted) return value;
      const ms = Math.min(opts.recheckMs, left);
      if (wake) await wake.next(ms, opts.signal);
      else await sleep(ms, undefined, { signal: opts.signal }).catch(() => undefined);
    }
  } finally {
    wake?.close();
  }
}
