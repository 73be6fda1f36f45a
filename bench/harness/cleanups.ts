/**
 * What a bench started, stopped in reverse order when it ends (a stop that fails does not keep
 * the others from running). The processes it launched (tooling/launcher.ts) are SIGKILLed by
 * the launcher should the bench exit with any of them still running.
 */
export class Cleanups {
  private readonly stops: Array<() => Promise<unknown>> = [];

  push(stop: () => Promise<unknown>): void {
    this.stops.push(stop);
  }

  async run(): Promise<void> {
    for (const stop of this.stops.reverse()) await stop().catch(() => undefined);
    this.stops.length = 0;
  }
}
