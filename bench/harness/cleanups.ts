/** What a bench started, stopped in reverse order when it ends (a failing stop does not keep the others from running). */
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
