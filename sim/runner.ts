// What every simulator's stand-alone entry (`sim/*/main.ts`) shares: its port from the
// environment, and a clean stop on SIGINT or SIGTERM.

/** The port named by `envName`, else `fallback`; anything but a port number is refused. */
export function simPort(envName: string, fallback: number): number {
  const raw = process.env[envName];
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${envName} must be a port number, got "${raw}"`);
  return port;
}

/** Closes the simulator once on the first SIGINT or SIGTERM, then exits. */
export function closeOnSignals(sim: { close(): Promise<void> }): void {
  let closing = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (closing) return;
      closing = true;
      sim.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
}
