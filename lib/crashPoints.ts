import { config } from './config';

// Where an idempotent write can lose its process, named for what is durable at that moment
// (docs/reliability.md "Idempotency"):
//   claimed    the key's claim is written, nothing is committed
//   answered   the request's writes and the key's answer are written, not yet committed
//   committed  both are committed; the work after the COMMIT (a workflow start) has not run
//   responded  everything is done but the answer has not reached the client
// `CRASH_AT=<operation>:<point>` (config.crashAt, set by the crash-point tests only) makes the
// process SIGKILL itself there, as a machine failure would: no handler, no `finally`, no flush.
export type CrashPoint = 'claimed' | 'answered' | 'committed' | 'responded';

export function crashPoint(operation: string, point: CrashPoint): void {
  if (config.crashAt !== undefined && config.crashAt === `${operation}:${point}`) process.kill(process.pid, 'SIGKILL');
}
