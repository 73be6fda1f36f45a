import type { ChildProcess } from 'node:child_process';

/**
 * What a bench started, stopped in reverse order when it ends (a stop that fails does not keep
 * the others from running), and the child processes it spawned, SIGKILLed should the bench
 * exit with any of them still running.
 */
export class Cleanups {
  private readonly stops: Array<() => Promise<unknown>> = [];
  readonly children = new Set<ChildProcess>();

  constructor() {
    process.once('exit', () => {
      for (const c of this.children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    });
  }

  push(stop: () => Promise<unknown>): void {
    this.stops.push(stop);
  }

  async run(): Promise<void> {
    for (const stop of this.stops.reverse()) await stop().catch(() => undefined);
    this.stops.length = 0;
  }
}
