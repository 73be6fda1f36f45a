// Bench: the OAuth hot paths — POST /oauth/token with the refresh grant (each connection walks
// its own token chain: the next request carries the refresh token the previous answer returned)
// and GET /v1/workspaces/me with an OAuth access token — against the app in a child process
// (bench/README.md, figures history).

import http from 'node:http';
import os from 'node:os';
import { closeStores, resetStores, setBenchEnvironment } from './harness/database';
import { columns, writeResults } from './harness/format';
import { closedLoop, openLoop, requestText, type RunResult } from './harness/load';
import { benchFlags } from './harness/options';
import { machineInfo } from './harness/proc';
import { startServer } from './harness/servers';

const DATABASE_URL = process.env.BENCH_OAUTH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_oauth';
const REDIS_URL = process.env.BENCH_OAUTH_REDIS_URL ?? 'redis://127.0.0.1:6379/13';

const opt = benchFlags(
  'oauth: POST /oauth/token (refresh grant) and GET /v1/workspaces/me with OAuth tokens.',
  {
    connections: { default: 16, min: 1, integer: true, help: 'closed-loop keep-alive connections, one token family each' },
    duration: { default: 10, arg: 'S', help: 'seconds per measurement' },
    warmup: { default: 3, arg: 'S', help: 'seconds of warm-up before each measurement' },
    rate: { default: 200, min: 0.001, arg: 'R', help: 'open-loop requests/s for GET /v1/workspaces/me' },
  },
  `Environment: BENCH_OAUTH_DATABASE_URL (default ${DATABASE_URL}),
             BENCH_OAUTH_REDIS_URL (default ${REDIS_URL}; the db is flushed).`,
);
const { connections, rate } = opt;
const [durationMs, warmupMs] = [opt.duration * 1000, opt.warmup * 1000];
const { cpus, cpuModel: model, node } = machineInfo();

// The app reads its configuration once, at import: everything is set before the first import.
setBenchEnvironment(DATABASE_URL, REDIS_URL, {
  LOG_LEVEL: 'error',
  SECRET_KEY: 'bench-secret-key-0123456789abcdef',
  ENCRYPTION_KEY: 'bench-encryption-key',
  RATE_LIMIT_UNAUTHENTICATED: '10000000',
});
await resetStores(DATABASE_URL, REDIS_URL);
const server = await startServer('api', 'bench/harness/serve-app.ts', process.env);
try {
  // A client registered through the app, and one token family per connection for a member of a
  // workspace, minted as the operator's `oauth token` does (admin/controls.ts: the rows of a code
  // exchange without the browser).
  const { addMember, createProject, createUser, createWorkspace } = await import('../admin/provision');
  const { mintOAuthToken } = await import('../admin/controls');
  const workspace = await createWorkspace({ name: 'Bench Workspace', plan: 'BUSINESS' });
  const project = await createProject({ workspaceId: workspace.id, type: 'PERSONAL_BRAND', name: 'Bench Person' });
  await createProject({ workspaceId: workspace.id, type: 'COMPANY_PAGE', name: 'Bench Company', linkedProjectId: project.id });
  const user = await createUser({ email: 'bench@example.com', name: 'Bench User', password: 'bench password 123' });
  await addMember({ workspaceId: workspace.id, user: user.id, role: 'Admin' });
  const reg = await fetch(`${server.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Bench Client', redirect_uris: ['http://127.0.0.1/callback'] }),
  });
  const clientId = ((await reg.json()) as { client_id: string }).client_id;
  const families: Array<{ access: string; refresh: string }> = [];
  for (let i = 0; i < connections; i++) {
    const t = await mintOAuthToken({ user: user.id, clientId, workspaceId: workspace.id, scopes: ['read', 'write', 'offline_access'] });
    if (!t.refresh_token) throw new Error(`no refresh token minted: ${JSON.stringify(t)}`);
    families.push({ access: t.access_token, refresh: t.refresh_token });
  }
  await closeStores();

  // A refresh that walks its connection's family, and GET /v1/workspaces/me with its access token.
  const tokenUrl = new URL(`${server.baseUrl}/oauth/token`);
  const form = { 'content-type': 'application/x-www-form-urlencoded', connection: 'keep-alive' };
  const refreshStep = async (w: number, agent: http.Agent) => {
    const fam = families[w]!;
    const body = new URLSearchParams({ grant_type: 'refresh_token', client_id: clientId, refresh_token: fam.refresh }).toString();
    const res = await requestText(agent, tokenUrl, 'POST', form, body);
    if (res.status === 200) ({ access_token: fam.access, refresh_token: fam.refresh } = JSON.parse(res.body));
    return res;
  };
  const meUrl = new URL(`${server.baseUrl}/v1/workspaces/me`);
  const meStep = (i: number, agent: http.Agent) =>
    requestText(agent, meUrl, 'GET', { authorization: `Bearer ${families[i % families.length]!.access}`, connection: 'keep-alive' });
  const check = await meStep(0, new http.Agent());
  if (check.status !== 200 || JSON.parse(check.body).data?.principal?.type !== 'oauth_token')
    throw new Error(`GET /v1/workspaces/me answered ${check.status}: ${check.body.slice(0, 300)}`);

  // Each measurement after its warm-up. Everything shares the machine (generator, server,
  // Postgres, Redis): the load before and after says how busy it was.
  console.log(`oauth bench: ${connections} connections, ${durationMs / 1000} s per measurement, ${cpus} CPUs (${model})`);
  const loadBefore = os.loadavg()[0]!;
  await closedLoop(refreshStep, { connections, durationMs: warmupMs });
  const refreshGrant = await closedLoop(refreshStep, { connections, durationMs });
  await closedLoop(meStep, { connections, durationMs: warmupMs });
  const workspacesMe = await closedLoop(meStep, { connections, durationMs });
  const workspacesMeFixedRate = await openLoop(meStep, { rate, durationMs });
  const loadAfter = os.loadavg()[0]!;

  // The table on stdout, the figures in bench/results/oauth.json.
  const cols = columns([46, 7, 7, 7, 7, 6], ' ');
  const row = (name: string, x: RunResult) =>
    cols([name, x.rps.toFixed(0), ...[x.latencyMs.p50, x.latencyMs.p99, x.latencyMs.max].map((v) => v.toFixed(1)), String(x.errors)]);
  console.log(`\n${cols(['measurement', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'errors'])}`);
  console.log(row(`POST /oauth/token refresh (closed, ${connections} conn)`, refreshGrant));
  console.log(row(`GET /v1/workspaces/me (closed, ${connections} conn)`, workspacesMe));
  console.log(row(`GET /v1/workspaces/me (open, ${rate}/s)`, workspacesMeFixedRate));
  console.log(`\n1-minute load average: ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after (${cpus} CPUs)`);
  if (loadBefore > cpus * 0.5) console.log('NOTE: the machine was busy before the run; the figures are noisy, repeat on an idle machine.');
  for (const [name, x] of Object.entries({ refresh: refreshGrant, me: workspacesMe, 'me fixed rate': workspacesMeFixedRate }))
    if (x.errors) console.log(`NOTE: ${name} had non-200 answers: ${JSON.stringify(x.statuses)}`);
  const machine = { cpus, model, node, loadBefore, loadAfter };
  const options = { connections, durationMs, warmupMs, rate };
  writeResults('oauth', { at: new Date().toISOString(), machine, options, refreshGrant, workspacesMe, workspacesMeFixedRate });
  console.log(`\nwritten to bench/results/oauth.json`);
} finally {
  await server.stop();
}
