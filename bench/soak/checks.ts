import { SEED, POSTS, GENERATIONS, t0, receipts, stats, violations, violate } from '../soak';
import type { Receipt, Soak } from '../soak';
import { generationOutcomes, generationText } from './run';
import type { Plan } from './run';

// The soak's report: everything checked against the simulator's and the receiver's own records.

export type Checks = Awaited<ReturnType<typeof checkPosts>> &
  Awaited<ReturnType<typeof checkWebhooks>> &
  Awaited<ReturnType<typeof checkJobs>> &
  Awaited<ReturnType<typeof checkEffects>>;

export async function report(b: Soak, p: Plan): Promise<number> {
  const posts = await checkPosts(b, p);
  const webhooks = await checkWebhooks(b);
  const jobs = await checkJobs(b, webhooks.wsIds);
  const effects = await checkEffects(b, p, webhooks.wsIds);
  return printReport(b, p, { ...posts, ...webhooks, ...jobs, ...effects });
}

/** Every planned post against the network: published once at its final due time, or not at all when unscheduled; its row truthful. */
export async function checkPosts(b: Soak, p: Plan) {
  const { sim, db } = b;
  const { plan } = p;
  // ── Checks ────────────────────────────────────────────────────────────────────────────
  const onNetwork = (await sim.listPosts({ limit: 1_000_000 })).posts;
  const perRef = new Map<string, typeof onNetwork>();
  for (const p of onNetwork) {
    if (!p.reference) continue;
    perRef.set(p.reference, [...(perRef.get(p.reference) ?? []), p]);
  }
  const rows = await db()('posts')
    .whereIn(
      'id',
      plan.map((p) => p.id!),
    )
    .select('id', 'status', 'scheduled_at', 'published_at', 'delivery');
  const rowOf = new Map(rows.map((r: any) => [r.id, r]));
  // Posts by what went wrong (a post may count in several), and those whose change had no answer.
  const posts = { lost: 0, duplicated: 0, publishedUnscheduled: 0, early: 0, untruthful: 0, ambiguous: 0 };
  const lags: number[] = [];
  for (const p of plan) {
    const net = perRef.get(p.id!) ?? [];
    const row: any = rowOf.get(p.id!);
    const delivery = typeof row.delivery === 'string' ? JSON.parse(row.delivery) : row.delivery;
    if (net.length > 1) {
      posts.duplicated++;
      violate(`post ${p.id} (#${p.i}) on the network ${net.length} times`);
    }
    if (p.expect === 'ambiguous') {
      // The change had no definite answer: either outcome is allowed, but the state must match the network.
      posts.ambiguous++;
      const pub = net.length > 0;
      if (pub !== (row.status === 'published')) {
        posts.untruthful++;
        violate(`post ${p.id} (#${p.i}, ${p.op} without answer): status ${row.status} but ${net.length} network posts`);
      }
      continue;
    }
    if (p.expect === 'unscheduled') {
      if (net.length) {
        posts.publishedUnscheduled++;
        violate(`post ${p.id} (#${p.i}) unscheduled at ${new Date(p.opAt).toISOString()} but published ${net[0]!.receivedAt}`);
      }
      if (row.status !== 'draft' || row.scheduled_at !== null || delivery?.state !== 'not_scheduled') {
        posts.untruthful++;
        violate(
          `post ${p.id} (#${p.i}) unscheduled: status ${row.status}, scheduledAt ${row.scheduled_at}, delivery ${JSON.stringify(delivery)}`,
        );
      }
      continue;
    }
    if (!net.length) {
      posts.lost++;
      violate(
        `post ${p.id} (#${p.i}) due ${new Date(p.finalDue).toISOString()} never reached the network (status ${row.status}, delivery ${JSON.stringify(delivery)})`,
      );
      continue;
    }
    const receivedAt = Date.parse(net[0]!.receivedAt);
    lags.push(receivedAt - p.finalDue);
    // Published at its (final) due time, not before: a reschedule must move the publish.
    if (receivedAt < p.finalDue - 1_000) {
      posts.early++;
      violate(
        `post ${p.id} (#${p.i}) published ${net[0]!.receivedAt}, before its due time ${new Date(p.finalDue).toISOString()} (${p.op})`,
      );
    }
    if (row.status !== 'published' || !row.published_at || delivery?.state !== 'published') {
      posts.untruthful++;
      violate(
        `post ${p.id} (#${p.i}) on the network but status ${row.status}, publishedAt ${row.published_at}, delivery ${JSON.stringify(delivery)}`,
      );
    }
  }
  const planned = new Set(plan.map((p) => p.id!));
  const stray = onNetwork.filter((p) => !p.reference || !planned.has(p.reference)).length;
  if (stray) violate(`${stray} network posts that are no planned post`);
  return { posts, lags };
}

export async function checkWebhooks(b: Soak) {
  const { db, workspaces, endpointPath } = b;
  // Webhooks: every post event of the soak's workspaces has one delivery per endpoint, each
  // terminal; delivered ones reached the receiver with a 2xx; duplicates carry one Webhook-Id.
  const wsIds = workspaces.map((w) => w.id);
  const events = await db()('outbox_events')
    .whereIn('workspace_id', wsIds)
    .where('type', 'like', 'post.%')
    .select('id', 'type', 'workspace_id');
  const deliveries = (await db()('webhook_deliveries')
    .whereIn('workspace_id', wsIds)
    .select('event_id', 'endpoint_id', 'status', 'attempt_count', 'failure_reason')) as Array<{
    event_id: string;
    endpoint_id: string;
    status: string;
    attempt_count: number;
    failure_reason: string | null;
  }>;
  const endpointsOf = new Map<string, string[]>();
  for (const e of (await db()('webhook_endpoints').whereIn('workspace_id', wsIds).select('id', 'workspace_id')) as Array<{
    id: string;
    workspace_id: string;
  }>)
    endpointsOf.set(e.workspace_id, [...(endpointsOf.get(e.workspace_id) ?? []), e.id]);
  const deliveryOf = new Map(deliveries.map((d) => [`${d.event_id}/${d.endpoint_id}`, d]));
  const byPair = new Map<string, Receipt[]>();
  for (const r of receipts) byPair.set(`${r.eventId}${r.endpoint}`, [...(byPair.get(`${r.eventId}${r.endpoint}`) ?? []), r]);
  const eventIds = new Set(events.map((e: any) => e.id));
  // Deliveries by outcome, each (event, endpoint) pair counted once; failures by reason.
  const wh = {
    pairs: 0,
    delivered: 0,
    failed: 0,
    deadFailed: 0,
    failureReasons: {} as Record<string, number>,
    open: 0,
    droppedSilently: 0,
    duplicated: 0,
    badSignature: 0,
  };
  for (const e of events as Array<{ id: string; type: string; workspace_id: string }>) {
    for (const endpointId of endpointsOf.get(e.workspace_id) ?? []) {
      wh.pairs++;
      const hookPath = endpointPath.get(endpointId)!;
      const d = deliveryOf.get(`${e.id}/${endpointId}`);
      const got = byPair.get(`${e.id}${hookPath}`) ?? [];
      const ok = got.filter((r) => r.answered < 300);
      if (!d) {
        wh.droppedSilently++;
        violate(`event ${e.id} (${e.type}) has no delivery record for ${hookPath}`);
        continue;
      }
      if (d.status === 'delivered') {
        wh.delivered++;
        if (!ok.length) {
          wh.droppedSilently++;
          violate(`event ${e.id} recorded delivered to ${hookPath} but the receiver never answered it 2xx (${got.length} requests)`);
        }
      } else if (d.status === 'failed') {
        wh.failed++;
        if (hookPath.endsWith('/dead')) wh.deadFailed++;
        const reason = (d.failure_reason ?? 'none').split(/[:(]/)[0]!.trim().slice(0, 40);
        wh.failureReasons[reason] = (wh.failureReasons[reason] ?? 0) + 1;
        if (ok.length) violate(`event ${e.id} recorded permanently failed for ${hookPath} but the receiver answered it 2xx`);
      } else {
        wh.open++;
        violate(`event ${e.id} (${e.type}) delivery to ${hookPath} still ${d.status} after the drain (${d.attempt_count} attempts)`);
      }
      if (ok.length > 1) wh.duplicated++;
      if (new Set(got.map((r) => r.webhookId)).size > 1 || got.some((r) => r.webhookId !== e.id))
        violate(`event ${e.id}: Webhook-Id varies or differs across its ${got.length} requests to ${hookPath}`);
      wh.badSignature += got.filter((r) => !r.signatureOk).length;
    }
  }
  const deadEndpoint = (await db()('webhook_endpoints')
    .whereIn('workspace_id', wsIds)
    .where('url', 'like', '%/dead')
    .first('is_active', 'disabled_reason')) as { is_active: boolean; disabled_reason: string | null } | undefined;
  if (deadEndpoint && (deadEndpoint.is_active || !deadEndpoint.disabled_reason?.startsWith('repeated_failures')))
    violate(
      `the dead endpoint is not disabled with repeated_failures (isActive ${deadEndpoint?.is_active}, reason ${deadEndpoint?.disabled_reason})`,
    );
  if (wh.badSignature) violate(`${wh.badSignature} webhook requests with a signature that does not verify`);
  const unknownEvents = receipts.filter((r) => !eventIds.has(r.eventId)).length;
  if (unknownEvents) violate(`${unknownEvents} webhook requests for events not in the outbox`);
  return { wsIds, events, wh, deadEndpoint };
}

/**
 * spec 8, one request one effect: every idempotent write the soak sent maps to exactly one row,
 * found by the text the request carried (a create's content, a generation's source text),
 * whatever was killed while it ran. A second row is a duplicated effect; an accepted request
 * without its row is a lost one. A request that never got an answer may have made one row.
 */
export async function checkEffects(b: Soak, p: Plan, wsIds: string[]) {
  const { db } = b;
  const effects = { posts: { once: 0, duplicated: 0, lost: 0 }, generations: { once: 0, duplicated: 0, lost: 0, none: 0 } };
  const postRows = (await db()('posts')
    .whereIn('workspace_id', wsIds)
    .where('content', 'like', 'Soak post %')
    .groupBy('content')
    .select('content', db().raw('count(*)::int as n'))) as Array<{ content: string; n: number }>;
  const postsByContent = new Map(postRows.map((r) => [r.content, r.n]));
  for (const planned of p.plan) {
    const n = postsByContent.get(`Soak post ${planned.i} (seed ${SEED})`) ?? 0;
    if (n === 1) effects.posts.once++;
    else if (n > 1) {
      effects.posts.duplicated++;
      violate(`create request of post #${planned.i} made ${n} posts`);
    } else {
      effects.posts.lost++;
      violate(`create request of post #${planned.i} was answered 200 but made no post`);
    }
  }
  const jobRows = (await db()('jobs')
    .whereIn('workspace_id', wsIds)
    .where({ type: 'POST_GENERATION' })
    .groupByRaw("input->>'sourceText'")
    .select(db().raw("input->>'sourceText' as text"), db().raw('count(*)::int as n'))) as Array<{ text: string; n: number }>;
  const jobsByText = new Map(jobRows.map((r) => [r.text, r.n]));
  generationOutcomes.forEach((outcome, g) => {
    const n = jobsByText.get(generationText(g)) ?? 0;
    if (n > 1) {
      effects.generations.duplicated++;
      violate(`generation request ${g} (${outcome}) made ${n} jobs`);
    } else if (n === 1) {
      effects.generations.once++;
      if (outcome === 'refused') violate(`generation request ${g} was refused but made a job`);
    } else if (outcome === 'accepted') {
      effects.generations.lost++;
      violate(`generation request ${g} was accepted but made no job`);
    } else effects.generations.none++;
  });
  return { effects };
}

export async function checkJobs(b: Soak, wsIds: string[]) {
  const { db } = b;
  // Generation jobs: every job of the soak's workspaces terminal.
  const jobRows = (await db()('jobs').whereIn('workspace_id', wsIds).select('id', 'type', 'status', 'error_code')) as Array<{
    id: string;
    type: string;
    status: string;
    error_code: string | null;
  }>;
  const jobsByStatus: Record<string, number> = {};
  for (const j of jobRows) {
    jobsByStatus[j.status] = (jobsByStatus[j.status] ?? 0) + 1;
    if (!['DONE', 'FAILED', 'CANCELLED'].includes(j.status)) violate(`job ${j.id} (${j.type}) still ${j.status} after the drain`);
  }
  return { jobsByStatus };
}

export async function printReport(b: Soak, p: Plan, c: Checks): Promise<number> {
  const { sim } = b;
  const { plan } = p;
  const { lags, events, deadEndpoint, jobsByStatus, wh, posts, effects } = c;
  const sorted = lags.sort((a, b) => a - b);
  const q = (x: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(x * sorted.length) - 1)]! / 1000 : NaN);
  const counts = await sim.counts();
  const L = (label: string, value: string) => console.log(`  ${label.padEnd(52)}${value}`);
  console.log(`\nsoak result — seed ${SEED}, ${((Date.now() - t0) / 1000).toFixed(0)} s wall`);
  L(
    'posts',
    `${POSTS} created; ${plan.filter((p) => p.expect === 'published').length} expected published, ${plan.filter((p) => p.expect === 'unscheduled').length} unscheduled, ${posts.ambiguous} ambiguous`,
  );
  L('reschedules', JSON.stringify(stats.reschedules));
  L('unschedules', JSON.stringify(stats.unschedules));
  L('faults injected', JSON.stringify(stats.faults));
  L(
    'restarts',
    `worker ${stats.workerRestarts} after a kill + ${stats.workerSelfExits} after exiting on its own; API ${stats.apiRestarts} (${stats.apiStartFailures} failed starts retried); ${stats.apiRetries} client retries on a dead API`,
  );
  L(
    'generation jobs',
    `${GENERATIONS} requested: ${stats.generations.accepted} accepted, refused ${JSON.stringify(stats.generations.refused)}, ${stats.generations.noAnswer} without answer; rows by status ${JSON.stringify(jobsByStatus)}`,
  );
  L(
    'effects per idempotent request',
    `post creates: ${effects.posts.once} exactly once, ${effects.posts.duplicated} duplicated, ${effects.posts.lost} lost; generations: ${effects.generations.once} exactly once, ${effects.generations.duplicated} duplicated, ${effects.generations.lost} lost, ${effects.generations.none} refused or unanswered without a job`,
  );
  L('lost', String(posts.lost));
  L('duplicated', String(posts.duplicated));
  L('published although unscheduled', String(posts.publishedUnscheduled));
  L('published before the due time', String(posts.early));
  L('state or delivery block untruthful', String(posts.untruthful));
  L('publish lag (network) p50 / p99 / max', `${q(0.5).toFixed(1)} s / ${q(0.99).toFixed(1)} s / ${q(1).toFixed(1)} s`);
  L(
    'network createPost calls / replays / lost answers',
    `${counts.calls.createPost} / ${counts.replays} / ${counts.lostResponses} (${counts.faultsTriggered} calls hit by an injected fault)`,
  );
  L(
    'webhook events (post.*)',
    `${events.length} events × their workspace's endpoints = ${wh.pairs} deliveries: ${wh.delivered} delivered, ${wh.failed} permanently failed (${wh.deadFailed} of them to the dead endpoint; reasons ${JSON.stringify(wh.failureReasons)}), ${wh.open} not terminal, ${wh.droppedSilently} silently dropped`,
  );
  L(
    'dead endpoint',
    deadEndpoint ? `isActive ${deadEndpoint.is_active}, disabledReason ${JSON.stringify(deadEndpoint.disabled_reason)}` : 'none',
  );
  L(
    'webhook requests',
    `${receipts.length} (${receipts.filter((r) => r.answered >= 300).length} answered 503: outages and the dead endpoint), ${wh.duplicated} events delivered 2xx more than once (same Webhook-Id)`,
  );
  console.log(
    `\n${violations.length ? `FAIL: ${violations.length} violation(s)` : 'PASS: no violation'} — seed ${SEED} (replay: npm run bench -- soak --seed ${SEED}${process.argv
      .slice(2)
      .filter((a, i, all) => a !== '--seed' && all[i - 1] !== '--seed')
      .map((a) => ` ${a}`)
      .join('')})`,
  );
  for (const v of violations.slice(0, 40)) console.log(`  - ${v}`);
  if (violations.length > 40) console.log(`  … ${violations.length - 40} more`);
  return violations.length ? 1 : 0;
}
