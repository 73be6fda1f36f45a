import type { Knex } from 'knex';
import { S, SEED, t0, receipts, stats } from '../soak';
import type { Soak } from '../soak';
import { generationOutcomes, generationText, type Plan } from './run';
import { quantile, tally } from '../harness/format';
import { networkPosts } from '../harness/stack';

// The soak's report: everything checked against the simulator's and the receiver's own records.

const violations: string[] = [];
/** A violation; one more of `key` in `counts` when given. */
function violate(s: string, counts?: Record<string, number>, key?: string) {
  violations.push(s);
  if (counts) tally(counts, key!);
}

/** xs by key, each key's items in their order. */
function groupBy<T>(xs: Iterable<T>, key: (x: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const x of xs) groups.set(key(x), [...(groups.get(key(x)) ?? []), x]);
  return groups;
}

/** Every planned post against the network: published once at its final due time, or not at all when unscheduled; its row truthful. */
async function checkPosts({ sim, db }: Soak, { plan }: Plan) {
  const ids = plan.map((p) => p.id!);
  const { posts: onNetwork, byRef } = await networkPosts(sim);
  const rows = await db()('posts').whereIn('id', ids).select('id', 'status', 'scheduled_at', 'published_at', 'delivery');
  const rowOf = new Map(rows.map((r: any) => [r.id, r]));
  // Posts by what went wrong (a post may count in several), and those whose change had no answer.
  const posts = { lost: 0, duplicated: 0, publishedUnscheduled: 0, early: 0, untruthful: 0, ambiguous: 0 };
  const lags: number[] = [];
  for (const p of plan) {
    const net = byRef.get(p.id!);
    const row: any = rowOf.get(p.id!);
    const parsed = typeof row.delivery === 'string' ? JSON.parse(row.delivery) : row.delivery;
    const [delivery, state] = [JSON.stringify(parsed), (s: string) => parsed?.state === s];
    const post = `post ${p.id} (#${p.i})`;
    if (net && net.n > 1) violate(`${post} on the network ${net.n} times`, posts, 'duplicated');
    if (p.expect === 'ambiguous') {
      // The change had no definite answer: either outcome is allowed, but the state must match the network.
      posts.ambiguous++;
      const text = `post ${p.id} (#${p.i}, ${p.op} without answer): status ${row.status} but ${net?.n ?? 0} network posts`;
      if (!!net !== (row.status === 'published')) violate(text, posts, 'untruthful');
    } else if (p.expect === 'unscheduled') {
      const at = new Date(p.opAt).toISOString();
      if (net) violate(`${post} unscheduled at ${at} but published ${net.receivedAt}`, posts, 'publishedUnscheduled');
      if (row.status !== 'draft' || row.scheduled_at !== null || !state('not_scheduled'))
        violate(`${post} unscheduled: status ${row.status}, scheduledAt ${row.scheduled_at}, delivery ${delivery}`, posts, 'untruthful');
    } else if (!net) {
      const due = new Date(p.finalDue).toISOString();
      violate(`${post} due ${due} never reached the network (status ${row.status}, delivery ${delivery})`, posts, 'lost');
    } else {
      lags.push(net.firstMs - p.finalDue);
      // Published at its (final) due time, not before: a reschedule must move the publish.
      const due = new Date(p.finalDue).toISOString();
      if (net.firstMs < p.finalDue - 1_000)
        violate(`${post} published ${net.receivedAt}, before its due time ${due} (${p.op})`, posts, 'early');
      if (row.status !== 'published' || !row.published_at || !state('published')) {
        const text = `${post} on the network but status ${row.status}, publishedAt ${row.published_at}, delivery ${delivery}`;
        violate(text, posts, 'untruthful');
      }
    }
  }
  const planned = new Set(ids);
  const stray = onNetwork.filter((p) => !p.reference || !planned.has(p.reference)).length;
  if (stray) violate(`${stray} network posts that are no planned post`);
  return { posts, lags };
}

// Webhooks: every post event of the soak's workspaces has one delivery per endpoint, each terminal; delivered ones reached
// the receiver with a 2xx; duplicates carry one Webhook-Id.
async function checkWebhooks({ db, workspaces, endpointPath }: Soak) {
  const wsIds = workspaces.map((w) => w.id);
  const events: Array<{ id: string; type: string; workspace_id: string }> = await db()('outbox_events')
    .whereIn('workspace_id', wsIds)
    .where('type', 'like', 'post.%')
    .select('id', 'type', 'workspace_id');
  const deliveries = await db()('webhook_deliveries')
    .whereIn('workspace_id', wsIds)
    .select('event_id', 'endpoint_id', 'status', 'attempt_count', 'failure_reason');
  const endpoints: Array<{ id: string; workspace_id: string }> = await db()('webhook_endpoints')
    .whereIn('workspace_id', wsIds)
    .select('id', 'workspace_id');
  const endpointsOf = groupBy(endpoints, (e) => e.workspace_id);
  const deliveryOf = new Map(deliveries.map((d: any) => [`${d.event_id}/${d.endpoint_id}`, d]));
  const byPair = groupBy(receipts, (r) => `${r.eventId}${r.path}`);
  // Deliveries by outcome, each (event, endpoint) pair counted once; failures by reason.
  const wh = { pairs: 0, delivered: 0, failed: 0, deadFailed: 0, open: 0, droppedSilently: 0, duplicated: 0, badSignature: 0 };
  const failureReasons: Record<string, number> = {};
  for (const e of events)
    for (const { id: endpointId } of endpointsOf.get(e.workspace_id) ?? []) {
      wh.pairs++;
      const hookPath = endpointPath.get(endpointId)!;
      const d: any = deliveryOf.get(`${e.id}/${endpointId}`);
      const got = byPair.get(`${e.id}${hookPath}`) ?? [];
      const ok = got.filter((r) => r.answered < 300);
      const event = `event ${e.id} (${e.type})`;
      if (!d) {
        violate(`${event} has no delivery record for ${hookPath}`, wh, 'droppedSilently');
        continue;
      }
      if (d.status === 'delivered') {
        wh.delivered++;
        const text = `event ${e.id} recorded delivered to ${hookPath} but the receiver never answered it 2xx (${got.length} requests)`;
        if (!ok.length) violate(text, wh, 'droppedSilently');
      } else if (d.status === 'failed') {
        wh.failed++;
        if (hookPath.endsWith('/dead')) wh.deadFailed++;
        tally(failureReasons, (d.failure_reason ?? 'none').split(/[:(]/)[0]!.trim().slice(0, 40));
        if (ok.length) violate(`event ${e.id} recorded permanently failed for ${hookPath} but the receiver answered it 2xx`);
      } else violate(`${event} delivery to ${hookPath} still ${d.status} after the drain (${d.attempt_count} attempts)`, wh, 'open');
      if (ok.length > 1) wh.duplicated++;
      if (new Set(got.map((r) => r.webhookId)).size > 1 || got.some((r) => r.webhookId !== e.id))
        violate(`event ${e.id}: Webhook-Id varies or differs across its ${got.length} requests to ${hookPath}`);
      wh.badSignature += got.filter((r) => !r.signatureOk).length;
    }
  const dead: { is_active: boolean; disabled_reason: string | null } | undefined = await db()('webhook_endpoints')
    .whereIn('workspace_id', wsIds)
    .where('url', 'like', '%/dead')
    .first('is_active', 'disabled_reason');
  if (dead && (dead.is_active || !dead.disabled_reason?.startsWith('repeated_failures')))
    violate(`the dead endpoint is not disabled with repeated_failures (isActive ${dead.is_active}, reason ${dead.disabled_reason})`);
  if (wh.badSignature) violate(`${wh.badSignature} webhook requests with a signature that does not verify`);
  const eventIds = new Set(events.map((e) => e.id));
  const unknownEvents = receipts.filter((r) => !eventIds.has(r.eventId)).length;
  if (unknownEvents) violate(`${unknownEvents} webhook requests for events not in the outbox`);
  return { wsIds, events, wh: { ...wh, failureReasons }, deadEndpoint: dead };
}

// spec 8, one request one effect: every idempotent write the soak sent maps to exactly one row, found by the text it carried
// (a create's content, a generation's source text), whatever was killed while it ran. A second row is a duplicated effect, an
// accepted request without its row a lost one; a request that never got an answer may have made one row.
async function checkEffects({ db }: Soak, p: Plan, wsIds: string[]) {
  const posts = { once: 0, duplicated: 0, lost: 0 };
  const generations = { once: 0, duplicated: 0, lost: 0, none: 0 };
  /** Rows of `q` in the soak's workspaces by `text`, how many each. */
  const countBy = async (q: Knex.QueryBuilder, text: string) => {
    const rows: Array<{ text: string; n: number }> = await q
      .whereIn('workspace_id', wsIds)
      .groupByRaw(text)
      .select(db().raw(`${text} as text`), db().raw('count(*)::int as n'));
    return new Map(rows.map((r) => [r.text, r.n]));
  };
  const postsByContent = await countBy(db()('posts').where('content', 'like', 'Soak post %'), 'content');
  for (const planned of p.plan) {
    const n = postsByContent.get(`Soak post ${planned.i} (seed ${SEED})`) ?? 0;
    if (n === 1) posts.once++;
    else if (n > 1) violate(`create request of post #${planned.i} made ${n} posts`, posts, 'duplicated');
    else violate(`create request of post #${planned.i} was answered 200 but made no post`, posts, 'lost');
  }
  const jobsByText = await countBy(db()('jobs').where({ type: 'POST_GENERATION' }), "input->>'sourceText'");
  generationOutcomes.forEach((outcome, g) => {
    const n = jobsByText.get(generationText(g)) ?? 0;
    if (n > 1) violate(`generation request ${g} (${outcome}) made ${n} jobs`, generations, 'duplicated');
    else if (n === 1) {
      generations.once++;
      if (outcome === 'refused') violate(`generation request ${g} was refused but made a job`);
    } else if (outcome === 'accepted') violate(`generation request ${g} was accepted but made no job`, generations, 'lost');
    else generations.none++;
  });
  return { posts, generations };
}

/** Every check, then the report; the exit code: 1 on any violation. */
export async function report(b: Soak, p: Plan): Promise<number> {
  const { posts, lags } = await checkPosts(b, p);
  const { wsIds, events, wh, deadEndpoint } = await checkWebhooks(b);
  // Generation jobs: every job of the soak's workspaces terminal.
  const jobsByStatus: Record<string, number> = {};
  for (const j of await b.db()('jobs').whereIn('workspace_id', wsIds).select('id', 'type', 'status')) {
    tally(jobsByStatus, j.status);
    if (!['DONE', 'FAILED', 'CANCELLED'].includes(j.status)) violate(`job ${j.id} (${j.type}) still ${j.status} after the drain`);
  }
  const { posts: ep, generations: eg } = await checkEffects(b, p, wsIds);
  const q = (x: number) => ((quantile(lags, x) ?? NaN) / 1000).toFixed(1);
  const counts = await b.sim.counts();
  const { generations: gen, faults, reschedules, unschedules } = stats;
  const expected = (e: string) => p.plan.filter((x) => x.expect === e).length;
  const dead = deadEndpoint && `isActive ${deadEndpoint.is_active}, disabledReason ${JSON.stringify(deadEndpoint.disabled_reason)}`;
  console.log(`
soak result — seed ${SEED}, ${((Date.now() - t0) / 1000).toFixed(0)} s wall
  posts                                               ${S.posts} created; ${expected('published')} expected published, ${expected('unscheduled')} unscheduled, ${posts.ambiguous} ambiguous
  reschedules                                         ${JSON.stringify(reschedules)}
  unschedules                                         ${JSON.stringify(unschedules)}
  faults injected                                     ${JSON.stringify(faults)}
  restarts                                            worker ${stats.worker.restarts} after a kill + ${stats.worker.selfExits} after exiting on its own; API ${stats.api.restarts} (${stats.api.startFailures} failed starts retried); ${stats.api.retries} client retries on a dead API
  generation jobs                                     ${S.generations} requested: ${gen.accepted} accepted, refused ${JSON.stringify(gen.refused)}, ${gen.noAnswer} without answer; rows by status ${JSON.stringify(jobsByStatus)}
  effects per idempotent request                      post creates: ${ep.once} exactly once, ${ep.duplicated} duplicated, ${ep.lost} lost; generations: ${eg.once} exactly once, ${eg.duplicated} duplicated, ${eg.lost} lost, ${eg.none} refused or unanswered without a job
  lost                                                ${posts.lost}
  duplicated                                          ${posts.duplicated}
  published although unscheduled                      ${posts.publishedUnscheduled}
  published before the due time                       ${posts.early}
  state or delivery block untruthful                  ${posts.untruthful}
  publish lag (network) p50 / p99 / max               ${q(0.5)} s / ${q(0.99)} s / ${q(1)} s
  network createPost calls / replays / lost answers   ${counts.calls.createPost} / ${counts.replays} / ${counts.lostResponses} (${counts.faultsTriggered} calls hit by an injected fault)
  webhook events (post.*)                             ${events.length} events × their workspace's endpoints = ${wh.pairs} deliveries: ${wh.delivered} delivered, ${wh.failed} permanently failed (${wh.deadFailed} of them to the dead endpoint; reasons ${JSON.stringify(wh.failureReasons)}), ${wh.open} not terminal, ${wh.droppedSilently} silently dropped
  dead endpoint                                       ${dead || 'none'}
  webhook requests                                    ${receipts.length} (${receipts.filter((r) => r.answered >= 300).length} answered 503: outages and the dead endpoint), ${wh.duplicated} events delivered 2xx more than once (same Webhook-Id)`);
  const args = process.argv.slice(2).filter((a, i, all) => a !== '--seed' && all[i - 1] !== '--seed');
  const verdict = violations.length ? `FAIL: ${violations.length} violation(s)` : 'PASS: no violation';
  console.log(`\n${verdict} — seed ${SEED} (replay: npm run bench -- soak --seed ${SEED}${args.map((a) => ` ${a}`).join('')})`);
  for (const v of violations.slice(0, 40)) console.log(`  - ${v}`);
  if (violations.length > 40) console.log(`  … ${violations.length - 40} more`);
  return violations.length ? 1 : 0;
}
