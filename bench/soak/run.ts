import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';
import { opt, S, SEED, NETWORK_TIMEOUT_MS, rand, between, pick, log, receiverOutage, redis, startApi } from '../soak';
import { apis, call, stats } from '../soak';
import type { Soak } from '../soak';
import { shuffle } from '../harness/content';
import { s1, tally } from '../harness/format';

// The soak's run: the posts created, then changed, generated and faulted, until everything settles.

export type Plan = ReturnType<typeof planRun>;

export async function run(b: Soak): Promise<Plan> {
  const p = planRun(b);
  await createPlanned(b, p);
  await Promise.all([changePosts(b, p), requestGenerations(b, p), injectFaults(b, p)]);
  await settle(b, p);
  return p;
}

/** The plan, all from the seed: every post, its change if any, and the faults, each at its time. */
function planRun({ workspaces }: Soak) {
  // Creation runs first, in order of due time, so it only has to stay ahead of the due times: 20 s plus 60 ms a post of lead
  // (a 2-core machine shared with other work creates 3 to 30 posts a second; the due times come at S.posts / duration a second).
  const start = Date.now() + 20_000 + S.posts * 60;
  const [unschedule, reschedule] = [opt['unschedule-share'], opt['reschedule-share']];
  const plan = Array.from({ length: S.posts }, (_, i) => {
    const workspace = Math.floor(rand() * S.workspaces);
    const due = Math.round(start + 10_000 + rand() * (S.durationMs - 10_000));
    const r = rand();
    const op: 'none' | 'reschedule' | 'unschedule' = r < unschedule ? 'unschedule' : r < unschedule + reschedule ? 'reschedule' : 'none';
    // Changes land well before the old due time so the expected outcome is definite.
    const opAt = Math.round(between(start, Math.max(start, due - 8_000)));
    const newDue = Math.round(due + between(5_000, 40_000));
    const projectId = pick(workspaces[workspace]!.projects);
    /** What a definite answer made true: the schedule the post must have been published at, or unscheduled. */
    const expect = (op === 'unschedule' ? 'unscheduled' : 'published') as 'published' | 'unscheduled' | 'ambiguous';
    const finalDue = op === 'reschedule' ? newDue : due;
    return { i, workspace, projectId, id: null as string | null, due, op, opAt, newDue, expect, finalDue };
  });
  const allKinds = ['worker_kill', 'api_kill', 'net_transient', 'net_lost_response', 'net_timeout', 'receiver_outage', 'temporal_kill'];
  allKinds.push('redis_restart', ...(S.cluster ? ['history_kill', 'matching_kill', 'frontend_kill', 'temporal_db_drop'] : []));
  const kinds = opt.faults === 'all' ? allKinds : opt.faults.split(',');
  const unknownKinds = kinds.filter((k) => !allKinds.includes(k));
  if (unknownKinds.length) throw new Error(`unknown fault kind(s): ${unknownKinds.join(', ')}`);
  // Every kind once, in a seeded order, before random draws: a short run still meets each (when it has room for them all).
  const firstRound = shuffle([...kinds], rand);
  const faultTimes: Array<{ at: number; kind: string; arg: number }> = [];
  for (let at = start + between(3_000, S.faultEveryMs); at < start + S.durationMs; at += between(0.5, 1.5) * S.faultEveryMs)
    faultTimes.push({ at, kind: firstRound[faultTimes.length] ?? pick(kinds), arg: rand() });
  return { start, plan, faultTimes };
}

/** Creation, before the faults start (a create that failed would be a setup error, not a finding). */
async function createPlanned({ workspaces }: Soak, { start, plan }: Plan) {
  const byDue = [...plan].sort((x, y) => x.due - y.due);
  await pLimit(8).map(byDue, async (p) => {
    const body = { projectId: p.projectId, content: `Soak post ${p.i} (seed ${SEED})`, scheduledFor: new Date(p.due).toISOString() };
    const a = await call('POST', '/v1/posts', workspaces[p.workspace]!.apiKey, body);
    if (!a || a.status !== 200) throw new Error(`create ${p.i}: ${a ? `${a.status} ${JSON.stringify(a.body)}` : 'no answer'}`);
    p.id = a.body.data.id;
  });
  const hms = (t: number) => new Date(t).toISOString().slice(11, 19);
  log(`created ${S.posts} scheduled posts (due ${hms(start + 10_000)}…${hms(start + S.durationMs)} UTC)`);
  if (Date.now() > start) log(`NOTE: creation overran the plan's start by ${s1(Date.now() - start)} s`);
}

/** Reschedules and unschedules at their planned times. */
async function changePosts({ workspaces }: Soak, { plan }: Plan) {
  const changed = plan.filter((p) => p.op !== 'none');
  await Promise.all(
    changed.map(async (p) => {
      await sleep(Math.max(0, p.opAt - Date.now()));
      // Too late to be definite (creation overran): the post is left as it is.
      if (Date.now() > p.due - 5_000) return void Object.assign(p, { op: 'none', finalDue: p.due, expect: 'published' });
      const bucket = p.op === 'reschedule' ? stats.reschedules : stats.unschedules;
      const scheduledFor = p.op === 'reschedule' ? new Date(p.newDue).toISOString() : null;
      const giveUp = Math.max(1_000, p.due - 3_000 - Date.now());
      const a = await call('PATCH', `/v1/posts/${p.id}`, workspaces[p.workspace]!.apiKey, { scheduledFor }, giveUp);
      if (!a) {
        bucket.noAnswer++;
        p.expect = 'ambiguous';
      } else if (a.status === 200) bucket.ok++;
      else {
        // A definite refusal (409 connection check, …) leaves the post unchanged (spec 3.1).
        bucket.refused++;
        Object.assign(p, { expect: 'published', finalDue: p.due });
      }
    }),
  );
}

/** What each generation request (by its number) was answered; its job's source text names the number. */
export const generationOutcomes: Array<'accepted' | 'refused' | 'no answer'> = [];
export const generationText = (g: number) => `Soak generation ${g} (seed ${SEED}): what a week of scheduled posts taught us about retries.`;

/** Generation jobs at random moments of the run, in random workspaces (built-in writer). */
async function requestGenerations({ workspaces }: Soak, { start }: Plan) {
  await Promise.all(
    Array.from({ length: S.generations }, async (_, g) => {
      const w = Math.floor(rand() * S.workspaces);
      const projectId = pick(workspaces[w]!.projects);
      await sleep(Math.max(0, start + rand() * S.durationMs - Date.now()));
      const body = { projectId, source: { type: 'text', text: generationText(g) } };
      const a = await call('POST', '/v1/posts/generations', workspaces[w]!.apiKey, body);
      generationOutcomes[g] = !a ? 'no answer' : a.status === 200 ? 'accepted' : 'refused';
      if (!a) stats.generations.noAnswer++;
      else if (a.status === 200) stats.generations.accepted++;
      else tally(stats.generations.refused, `${a.status} ${a.body?.error?.code ?? ''}`.trim());
    }),
  );
}

/** The faults, each at its planned time; a service killed is restarted after its delay (the restarts are awaited in settle). */
async function injectFaults({ temporal, sim, db, workers, restarts, killedByUs, launchWorker }: Soak, p: Plan) {
  const { cluster } = temporal;
  let temporalDown = false;
  /** A fault counted under `kind` and logged; with `restart`, that run after `ms` (awaited in settle) and its line logged. */
  const fault = (kind: string, text: string, ms = 0, restart?: () => Promise<string>) => {
    tally(stats.faults, kind);
    log(text);
    if (restart) restarts.push(sleep(ms).then(restart).then(log));
  };
  const serviceKill = async (arg: number, name: 'history' | 'matching' | 'frontend') => {
    if (temporalDown || !cluster) return;
    temporalDown = true;
    const service = cluster.services[name];
    const delay = 2_000 + arg * 8_000;
    await service.kill();
    fault(`Temporal ${service.name} SIGKILL`, `SIGKILL Temporal ${service.name} service; restart in ${s1(delay)} s`, delay, async () => {
      await service.restart();
      temporalDown = false;
      return `Temporal ${service.name} restarted, pid ${service.process.child.pid}`;
    });
  };
  const inject: Record<string, (arg: number) => Promise<void>> = {
    // One of the running workers; with two or more, the others keep draining meanwhile.
    async worker_kill(arg) {
      const live = workers.filter((x) => !x.exit && !killedByUs.has(x.pid));
      const w = live[Math.floor(arg * live.length)];
      if (!w) return;
      killedByUs.add(w.pid);
      await w.kill('SIGKILL');
      const delay = 1_000 + arg * 9_000;
      fault('worker SIGKILL', `SIGKILL worker pid ${w.pid}; restart in ${s1(delay)} s`, delay, async () => {
        const nw = await launchWorker();
        stats.worker.restarts++;
        return `worker restarted, pid ${nw.pid}`;
      });
    },
    async api_kill(arg) {
      const up = apis.filter((a) => a.up());
      if (up.length < 2) return; // one already down: keep one serving
      const victim = up[Math.floor(arg * up.length)]!;
      await victim.kill();
      const delay = 1_000 + arg * 7_000;
      fault('API SIGKILL', `SIGKILL API #${victim.slot} (:${victim.port}); restart in ${s1(delay)} s`, delay, async () => {
        const na = (apis[victim.slot] = await startApi(victim.slot));
        stats.api.restarts++;
        return `API #${victim.slot} restarted on :${na.port}`;
      });
    },
    async net_transient(arg) {
      const times = 1 + Math.floor(arg * 5);
      const status = pick([429, 500, 502, 503, 504] as const);
      await sim.addFault({ kind: 'transient', operation: 'createPost', times, status });
      fault('network transient', `network: next ${times} createPost calls fail with ${status}`);
    },
    async net_lost_response(arg) {
      const times = 1 + Math.floor(arg * 3);
      const lostAs = arg < 0.5 ? 'socket' : '503';
      await sim.addFault({ kind: 'lost_response', operation: 'createPost', times, lostAs });
      fault('network lost response', `network: next ${times} createPost calls succeed and lose the answer (${lostAs})`);
    },
    async net_timeout(arg) {
      const ms = 2_000 + Math.floor(arg * 6_000);
      const latency = NETWORK_TIMEOUT_MS + 1_500;
      await sim.setLatency({ ms: latency, operation: 'createPost' });
      const text = `network: createPost answers after ${latency} ms (client timeout ${NETWORK_TIMEOUT_MS} ms) for ${s1(ms)} s`;
      fault('network timeout', text);
      restarts.push(sleep(ms).then(() => sim.setLatency({ ms: 0, operation: 'createPost' })));
    },
    history_kill: (arg) => serviceKill(arg, 'history'),
    matching_kill: (arg) => serviceKill(arg, 'matching'),
    frontend_kill: (arg) => serviceKill(arg, 'frontend'),
    async temporal_db_drop() {
      if (!cluster) return;
      // Every connection of the Temporal server to its databases, as a failover would end them; the services reconnect.
      const { rows } = await db().raw(
        'SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = ANY(?) AND pid <> pg_backend_pid()',
        [[cluster.db.name, cluster.db.visibilityName]],
      );
      fault('Temporal Postgres connections dropped', `terminated ${rows[0].n} Postgres connections of the Temporal server`);
    },
    async temporal_kill(arg) {
      if (temporalDown) return;
      temporalDown = true;
      const delay = 2_000 + arg * 10_000;
      // Every cluster service at once, as a host loss would, restarted in the safe order; the dev server on the same file.
      await temporal.kill();
      const what = cluster ? 'every Temporal service' : 'Temporal dev server';
      fault('Temporal SIGKILL', `SIGKILL ${what}; restart${cluster ? '' : ' (same file)'} in ${s1(delay)} s`, delay, async () => {
        await temporal.start();
        temporalDown = false;
        return cluster ? 'Temporal services restarted' : `Temporal dev server restarted, pid ${temporal.pids()[0]}`;
      });
    },
    async redis_restart(arg) {
      const dead = redis.p;
      if (!dead?.running()) return;
      const delay = 1_000 + arg * 7_000;
      await dead.kill('SIGKILL');
      fault('Redis restart', `SIGKILL Redis (everything it held is lost); restart in ${s1(delay)} s`, delay, async () => {
        redis.p = await dead.restart();
        return 'Redis restarted (empty)';
      });
    },
    async receiver_outage(arg) {
      const ms = 3_000 + arg * 12_000;
      receiverOutage.until = Date.now() + ms;
      fault('webhook receiver outage', `webhook receiver answers 503 for ${s1(ms)} s`);
    },
  };
  // A creation that overran the plan's start shifts the fault schedule rather than firing the missed faults at once.
  const shift = Math.max(0, Date.now() - p.start);
  for (const f of p.faultTimes) {
    await sleep(Math.max(0, f.at + shift - Date.now()));
    await inject[f.kind]!(f.arg);
  }
}

async function settle({ sim, db, workspaces, restarts }: Soak, { plan }: Plan) {
  // Restarts may queue further restarts (a worker that exits on its own): wait until none is added.
  for (let n = -1; n !== restarts.length;) {
    n = restarts.length;
    await Promise.all(restarts);
  }
  // Injected network faults are left in place: one injected just now still fires on the next calls.
  await sim.setLatency({ ms: 0, operation: 'createPost' });
  log(`faults over: ${JSON.stringify(stats.faults)}; waiting for publishing and webhooks to settle`);

  // Drain: until every expected post, delivery and job is done, or --drain seconds without progress (a moving backlog is waited for).
  const lastDue = Math.max(...plan.map((p) => p.finalDue));
  let drainUntil = Math.max(lastDue, Date.now()) + S.drainMs;
  let progress = '';
  const expectedIds = plan.filter((p) => p.expect === 'published').map((p) => p.id!);
  const count = async (q: import('knex').Knex.QueryBuilder) => Number(((await q.count({ n: '*' })) as Array<{ n: string }>)[0]!.n);
  const wsIds = workspaces.map((w) => w.id);
  for (;;) {
    const published = await count(db()('posts').whereIn('id', expectedIds).where({ status: 'published' }));
    const open = await count(db()('webhook_deliveries').whereNotIn('status', ['delivered', 'failed']));
    const running = await count(db()('jobs').whereIn('workspace_id', wsIds).whereNotIn('status', ['DONE', 'FAILED', 'CANCELLED']));
    const now = `${published}/${open}/${running}/${await count(db()('webhook_deliveries'))}`;
    if (now !== progress) {
      progress = now;
      drainUntil = Math.max(drainUntil, Date.now() + S.drainMs);
    }
    const settled = published === expectedIds.length && open === 0 && running === 0 && Date.now() > lastDue + 5_000;
    if (settled || Date.now() > drainUntil) break;
    await sleep(2_000);
  }
  await sleep(3_000); // a late duplicate shows up now, not after the checks
}
