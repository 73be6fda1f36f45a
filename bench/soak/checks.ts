import { S, SEED, t0, receipts, stats, tally, violations, violate } from '../soak';
import type { Soak } from '../soak';
import { generationOutcomes, generationText } from './run';
import type { Plan } from './run';
import { quantile } from '../harness/format';

// The soak's report: everything checked against the simulator's and the receiver's own records.

/** xs by key, each key's items in their order. */
function groupBy<T>(xs: Iterable<T>, key: (x: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const x of xs) groups.set(key(x), [...(groups.get(key(x)) ?? []), x]);
  return groups;
}

/** Every planned post against the network: published once at its final due time, or not at all when unscheduled; its row truthful. */
export async function checkPosts(b: Soak, { plan }: Plan) {
  const ids = plan.map((p) => p.id!);
  const onNetwork = (await b.sim.listPosts({ limit: 1_000_000 })).posts;
  const perRef = groupBy(onNetwork, (n) => n.reference ?? '');
  const rows = await b.db()('posts').whereIn('id', ids).select('id', 'status', 'scheduled_at', 'published_at', 'delivery');
  const rowOf = new Map(rows.map((r: any) => [r.id, r]));
  // Posts by what went wrong (a post may count in several), and those whose change had no answer.
  const posts = { lost: 0, duplicated: 0, publishedUnscheduled: 0, early: 0, untruthful: 0, ambiguous: 0 };
  const lags: number[] = [];
  for (const p of plan) {
    const net = perRef.get(p.id!) ?? [];
    const row: any = rowOf.get(p.id!);
    const delivery = typeof row.delivery === 'string' ? JSON.parse(row.delivery) : row.delivery;
    const post = `post ${p.id} (#${p.i})`;
    if (net.length > 1) {
      posts.duplicated++;
      violate(`${post} on the network ${net.length} times`);
    }
    if (p.expect === 'ambiguous') {
      // The change had no definite answer: either outcome is allowed, but the state must match the network.
      posts.ambiguous++;
      if (net.length > 0 !== (row.status === 'published')) {
        posts.untruthful++;
        violate(`post ${p.id} (#${p.i}, ${p.op} without answer): status ${row.status} but ${net.length} network posts`);
      }
      continue;
    }
    if (p.expect === 'unscheduled') {
      if (net.length) {
        posts.publishedUnscheduled++;
        violate(`${post} unscheduled at ${new Date(p.opAt).toISOString()} but published ${net[0]!.receivedAt}`);
      }
      if (row.status !== 'draft' || row.scheduled_at !== null || delivery?.state !== 'not_scheduled') {
        posts.untruthful++;
        violate(`${post} unscheduled: status ${row.status}, scheduledAt ${row.scheduled_at}, delivery ${JSON.stringify(delivery)}`);
      }
      continue;
    }
    const due = new Date(p.finalDue).toISOString();
    if (!net.length) {
      posts.lost++;
      violate(`${post} due ${due} never reached the network (status ${row.status}, delivery ${JSON.stringify(delivery)})`);
      continue;
    }
    const receivedAt = Date.parse(net[0]!.receivedAt);
    lags.push(receivedAt - p.finalDue);
    // Published at its (final) due time, not before: a reschedule must move the publish.
    if (receivedAt < p.finalDue - 1_000) {
      posts.early++;
      violate(`${post} published ${net[0]!.receivedAt}, before its due time ${due} (${p.op})`);
    }
    if (row.status !== 'published' || !row.published_at || delivery?.state !== 'published') {
      posts.untruthful++;
      violate(`${post} on the network but status ${row.status}, publishedAt ${row.published_at}, delivery ${JSON.stringify(delivery)}`);
    }
  }
  const planned = new Set(ids);
  const stray = onNetwork.filter((p) => !p.reference || !planned.has(p.reference)).length;
  if (stray) violate(`${stray} network posts that are no planned post`);
  return { posts, lags };
}

/**
 * Webhooks: every post event of the soak's workspaces has one delivery per endpoint, each
 * terminal; delivered ones reached the receiver with a 2xx; duplicates carry one Webhook-Id.
 */
export async function checkWebhooks({ db, workspaces, endpointPath }: Soak) {
  const wsIds = workspaces.map((w) => w.id);
  const events = (await db()('outbox_events')
    .whereIn('workspace_id', wsIds)
    .where('type', 'like', 'post.%')
    .select('id', 'type', 'workspace_id')) as Array<{ id: string; type: string; workspace_id: string }>;
  const deliveries = await db()('webhook_deliveries')
    .whereIn('workspace_id', wsIds)
    .select('event_id', 'endpoint_id', 'status', 'attempt_count', 'failure_reason');
  const endpoints = (await db()('webhook_endpoints').whereIn('workspace_id', wsIds).select('id', 'workspace_id')) as Array<{
    id: string;
    workspace_id: string;
  }>;
  const endpointsOf = groupBy(endpoints, (e) => e.workspace_id);
  const deliveryOf = new Map(deliveries.map((d: any) => [`${d.event_id}/${d.endpoint_id}`, d]));
  const byPair = groupBy(receipts, (r) => `${r.eventId}${r.path}`);
  // Deliveries by outcome, each (event, endpoint) pair counted once; failures by reason.
  const wh = { pairs: 0, delivered: 0, failed: 0, deadFailed: 0, open: 0, droppedSilently: 0, duplicated: 0, badSignature: 0 };
  const failureReasons: Record<string, number> = {};
  for (const e of events) {
    for (const { id: endpointId } of endpointsOf.get(e.workspace_id) ?? []) {
      wh.pairs++;
      const hookPath = endpointPath.get(endpointId)!;
      const d: any = deliveryOf.get(`${e.id}/${endpointId}`);
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
        tally(failureReasons, (d.failure_reason ?? 'none').split(/[:(]/)[0]!.trim().slice(0, 40));
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
  const eventIds = new Set(events.map((e) => e.id));
  const unknownEvents = receipts.filter((r) => !eventIds.has(r.eventId)).length;
  if (unknownEvents) violate(`${unknownEvents} webhook requests for events not in the outbox`);
  return { wsIds, events, wh: { ...wh, failureReasons }, deadEndpoint };
}

/**
 * spec 8, one request one effect: every idempotent write the soak sent maps to exactly one row,
 * found by the text the request carried (a create's content, a generation's source text),
 * whatever was killed while it ran. A second row is a duplicated effect; an accepted request
 * without its row is a lost one. A request that never got an answer may have made one row.
 */
export async function checkEffects({ db }: Soak, p: Plan, wsIds: string[]) {
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

/** Generation jobs: every job of the soak's workspaces terminal. */
export async function checkJobs(b: Soak, wsIds: string[]) {
  const jobsByStatus: Record<string, number> = {};
  for (const j of await b.db()('jobs').whereIn('workspace_id', wsIds).select('id', 'type', 'status')) {
    tally(jobsByStatus, j.status);
    if (!['DONE', 'FAILED', 'CANCELLED'].includes(j.status)) violate(`job ${j.id} (${j.type}) still ${j.status} after the drain`);
  }
  return { jobsByStatus };
}

/** Every check, then the report; the exit code: 1 on any violation. */
export async function report(b: Soak, p: Plan): Promise<number> {
  const { posts, lags } = await checkPosts(b, p);
  const { wsIds, events, wh, deadEndpoint } = await checkWebhooks(b);
  const { jobsByStatus } = await checkJobs(b, wsIds);
  const { effects } = await checkEffects(b, p, wsIds);
  const { plan } = p;
  const q = (x: number) => (quantile(lags, x) ?? NaN) / 1000;
  const counts = await b.sim.counts();
  const L = (label: string, value: string) => console.log(`  ${label.padEnd(52)}${value}`);
  const { generations: gen, faults, reschedules, unschedules } = stats;
  const [ep, eg] = [effects.posts, effects.generations];
  console.log(`\nsoak result — seed ${SEED}, ${((Date.now() - t0) / 1000).toFixed(0)} s wall`);
  const expected = (e: string) => plan.filter((p) => p.expect === e).length;
  L(
    'posts',
    `${S.posts} created; ${expected('published')} expected published, ${expected('unscheduled')} unscheduled, ${posts.ambiguous} ambiguous`,
  );
  L('reschedules', JSON.stringify(reschedules));
  L('unschedules', JSON.stringify(unschedules));
  L('faults injected', JSON.stringify(faults));
  L(
    'restarts',
    `worker ${stats.workerRestarts} after a kill + ${stats.workerSelfExits} after exiting on its own; API ${stats.apiRestarts} (${stats.apiStartFailures} failed starts retried); ${stats.apiRetries} client retries on a dead API`,
  );
  L(
    'generation jobs',
    `${S.generations} requested: ${gen.accepted} accepted, refused ${JSON.stringify(gen.refused)}, ${gen.noAnswer} without answer; rows by status ${JSON.stringify(jobsByStatus)}`,
  );
  L(
    'effects per idempotent request',
    `post creates: ${ep.once} exactly once, ${ep.duplicated} duplicated, ${ep.lost} lost; generations: ${eg.once} exactly once, ${eg.duplicated} duplicated, ${eg.lost} lost, ${eg.none} refused or unanswered without a job`,
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
  const dead = deadEndpoint && `isActive ${deadEndpoint.is_active}, disabledReason ${JSON.stringify(deadEndpoint.disabled_reason)}`;
  L('dead endpoint', dead || 'none');
  L(
    'webhook requests',
    `${receipts.length} (${receipts.filter((r) => r.answered >= 300).length} answered 503: outages and the dead endpoint), ${wh.duplicated} events delivered 2xx more than once (same Webhook-Id)`,
  );
  const replay = process.argv
    .slice(2)
    .filter((a, i, all) => a !== '--seed' && all[i - 1] !== '--seed')
    .map((a) => ` ${a}`)
    .join('');
  const verdict = violations.length ? `FAIL: ${violations.length} violation(s)` : 'PASS: no violation';
  console.log(`\n${verdict} — seed ${SEED} (replay: npm run bench -- soak --seed ${SEED}${replay})`);
  for (const v of violations.slice(0, 40)) console.log(`  - ${v}`);
  if (violations.length > 40) console.log(`  … ${violations.length - 40} more`);
  return violations.length ? 1 : 0;
}
