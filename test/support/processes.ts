import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

// Real service processes for end-to-end tests that kill and restart them. Node runs the entry
// itself (tsx as a loader, not its CLI wrapper), so SIGKILL reaches the process that serves.
const root = path.resolve(import.meta.dirname, '..', '..');

export interface ServiceProcess {
  child: ChildProcess;
  output: string[];
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function spawnService(
  entry: string,
  env: Record<string, string>,
  readyPattern: RegExp,
  timeoutMs = 60_000,
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} not ready in ${timeoutMs} ms:\n${output.join('').slice(-2000)}`)), timeoutMs);
    const onData = (d: Buffer) => {
      output.push(d.toString());
      if (readyPattern.test(d.toString())) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => output.push(d.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited with ${code}:\n${output.join('').slice(-2000)}`));
    });
  });
  child.removeAllListeners('exit');
  return {
    child,
    output,
    kill: (signal = 'SIGKILL') =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
}
