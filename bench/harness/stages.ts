import http from 'node:http';
import pg from 'pg';
import { authenticate } from '../../api/auth/authenticate';
import { listPosts, postsPageQuery } from '../../api/operations/posts/posts';
import { findProject } from '../../api/operations/projects/queries';
import { encodeCursor } from '../../api/pagination';
import { consume } from '../../api/rateLimit';
import { parseInput } from '../../api/validation';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { newId } from '../../lib/ids';
import { presentPostSummary } from '../../lib/presenters/posts';
import type { PostRow } from '../../lib/posts/row';
import { exchange } from './load';

// posts-list --stages, in the API process (serve-app.ts `stages`), unloaded: each step of
// GET /v1/posts run on its own many times with the real modules and connections (bench/README.md).

async function time(stage: string, iterations: number, fn: () => unknown) {
  // A few untimed rounds so the JIT and any connection pool are warm before the clock runs.
  for (let i = 0; i < Math.min(50, iterations); i++) await fn();
  const walls = new Float64Array(iterations);
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    await fn();
    walls[i] = performance.now() - t0;
  }
  const cpu = process.cpuUsage(cpu0);
  walls.sort();
  const wallP50Us = Math.round(walls[Math.floor(iterations / 2)]! * 1000);
  const wallMeanUs = Math.round((walls.reduce((a, b) => a + b, 0) / iterations) * 1000);
  return { stage, iterations, wallP50Us, wallMeanUs, cpuUsPerCall: Math.round((cpu.user + cpu.system) / iterations) };
}
export type StageTiming = Awaited<ReturnType<typeof time>>;

export async function timeStages(args: { token: string; projectId: string; port: number; iterations?: number }): Promise<StageTiming[]> {
  const n = args.iterations ?? 1000;
  const authenticated = () => authenticate({ token: args.token, targetWorkspaceId: undefined, resource: 'rest' });
  const validated = () => parseInput(listPosts.input, { projectId: args.projectId, limit: '50' }, 'query');
  const auth = await authenticated();
  const input = validated();
  const opCtx = { auth, requestId: 'req_bench', apiVersion: '2026-08-10' as const };
  const body = await listPosts.handler(opCtx, input);
  // The list's own first page as the service builds it (postsPageQuery), with this page's values in place of its params.
  const values: Record<string, string> = { workspaceId: auth.workspaceId, projectId: args.projectId };
  const shape = { role: auth.role, projects: null, statuses: null, dateFrom: false, dateTo: false, cursor: false, limit: 50 };
  const page = () => postsPageQuery(shape, (name) => values[name]!);
  const sql = page().toSQL();
  const native = sql.toNative();
  const rows = (await db().raw(sql.sql, sql.bindings)).rows as PostRow[];
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const headers = { authorization: `Bearer ${args.token}` };
  const url = new URL(`http://127.0.0.1:${args.port}/v1/posts?projectId=${encodeURIComponent(args.projectId)}&limit=50`);
  const cursor = { createdAt: rows[49]!.created_at.toISOString(), id: rows[49]!.id };
  // The same SQL straight through pg: what knex adds around the driver is the difference to knex.raw.
  const direct = new pg.Pool({ connectionString: config.databaseUrl, max: 1 });
  const stages: Array<[string, () => unknown]> = [
    // The whole request over HTTP on a kept-alive connection: the unloaded latency floor.
    ['HTTP GET /v1/posts (whole request, unloaded)', () => exchange(agent, url, 'GET', headers, undefined, false)],
    // The steps runRest takes, in order, then the parts a list request can consist of.
    ['authenticate (API key, cache hit)', authenticated],
    ['rate limit: consume() Redis EVALSHA', () => consume('read', auth.workspaceId)],
    ['validate query (zod parseInput)', validated],
    ['handler: listPosts.handler (its queries + page)', () => listPosts.handler(opCtx, input)],
    ['  project lookup: findProject (projects ⋈ connections)', () => findProject(auth, args.projectId)],
    ['  posts query via knex builder', page],
    ['  posts query via knex.raw (same SQL)', () => db().raw(sql.sql, sql.bindings)],
    ['  posts query via pg Pool directly (same SQL)', () => direct.query(native.sql, [...native.bindings])],
    ['  knex builder → SQL only (no I/O)', () => page().toSQL()],
    ['  present 50 rows (presentPostSummary)', () => rows.slice(0, 50).map(presentPostSummary)],
    ['  next_cursor (encodeCursor, sync HMAC)', () => encodeCursor(cursor, { projectId: args.projectId, role: 'admin' })],
    ['serialize body (JSON.stringify)', () => JSON.stringify(body)],
    ['request id (newId, requestContext)', () => newId('request')],
  ];
  const out: StageTiming[] = [];
  for (const [stage, fn] of stages) out.push(await time(stage, n, fn));
  await direct.end();
  agent.destroy();
  return out;
}
