import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { randomBase62 } from '../../lib/ids';

// The operator CLI as operators run it: a separate process per command, against the test
// database the runner prepared (DATABASE_URL and REDIS_URL are inherited).

export const root = path.resolve(import.meta.dirname, '..', '..');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

export function run(command: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd ?? root, env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr, json });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/**
 * `bin/admin ...` as operators run it: the wrapper, so the compiled entry (admin/cli/bundle.ts)
 * is what the suite exercises; ADMIN_CLI_BUNDLE=0 in `env` runs bin/admin.ts through tsx.
 */
export function admin(args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<Run> {
  return run(path.join(root, 'bin', 'admin'), args, opts);
}

export async function ok(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<any> {
  const r = await admin(args, opts);
  assert.equal(r.code, 0, `bin/admin ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  assert.notEqual(r.json, undefined, `stdout is not JSON: ${r.stdout}`);
  return r.json;
}

/** `bin/admin help` succeeds and names every one of `commands`. */
export async function assertHelpLists(commands: string[]): Promise<void> {
  const all = await admin(['help']);
  assert.equal(all.code, 0);
  for (const cmd of commands) assert.ok(all.stdout.includes(cmd), `help lists ${cmd}`);
}

/** A failure is exactly one line on stderr, nothing on stdout, and the given exit code. */
export async function fails(args: string[], code: 1 | 2, message: RegExp, opts: { env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  const r = await admin(args, opts);
  assert.equal(r.code, code, `bin/admin ${args.join(' ')}: expected exit ${code}, got ${r.code} (${r.stderr})`);
  assert.equal(r.stdout, '');
  // A migration another change adds while the suite runs is applied and reported on its own line.
  const lines = r.stderr
    .trimEnd()
    .split('\n')
    .filter((l) => !/^bin\/admin: applied \d+ migration/.test(l));
  assert.equal(lines.length, 1, `more than one line on stderr: ${r.stderr}`);
  assert.match(lines[0]!, message);
  return r;
}

export const unique = () => randomBase62(8).toLowerCase();
