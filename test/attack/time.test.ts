import assert from 'node:assert/strict';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { periodsAt, POOL_KEY } from '../../lib/spend/meters';
import { client, useApi } from '../support/app';
import { workspaceWithKey } from '../support/factories';

// Time (spec 4.4 scheduledFor, spec 8 AI budgets), end to end: an offset-less `scheduledFor`
// is wall time in the project's timezone, in five zones with DST (west and east of UTC, a
// whole-hour and a 45-minute offset, both hemispheres) and one without, across both DST changes
// of 2027; a wall time skipped by spring-forward moves forward by the gap, a repeated one is its
// earlier occurrence (docs/publishing.md "Local times and DST"). The expected instants are
// written out by hand from the zones' published rules, not computed by the code under test.

const CASES: [zone: string, local: string, utc: string, what: string][] = [
  // America/New_York: 2027-03-14 02:00 EST → 03:00 EDT; 2027-11-07 02:00 EDT → 01:00 EST.
  ['America/New_York', '2027-03-14T01:30:00', '2027-03-14T06:30:00.000Z', 'before spring-forward (EST)'],
  ['America/New_York', '2027-03-14T02:30:00', '2027-03-14T07:30:00.000Z', 'skipped hour → 03:30 EDT'],
  ['America/New_York', '2027-03-14T03:30:00', '2027-03-14T07:30:00.000Z', 'after spring-forward (EDT)'],
  ['America/New_York', '2027-11-07T00:30:00', '2027-11-07T04:30:00.000Z', 'before fall-back (EDT)'],
  ['America/New_York', '2027-11-07T01:30:00', '2027-11-07T05:30:00.000Z', 'repeated hour → first occurrence (EDT)'],
  ['America/New_York', '2027-11-07T02:30:00', '2027-11-07T07:30:00.000Z', 'after fall-back (EST)'],
  // Europe/London: 2027-03-28 01:00 GMT → 02:00 BST; 2027-10-31 02:00 BST → 01:00 GMT.
  ['Europe/London', '2027-03-28T00:30:00', '2027-03-28T00:30:00.000Z', 'before spring-forward (GMT)'],
  ['Europe/London', '2027-03-28T01:30:00', '2027-03-28T01:30:00.000Z', 'skipped hour → 02:30 BST'],
  ['Europe/London', '2027-03-28T02:30:00', '2027-03-28T01:30:00.000Z', 'after spring-forward (BST)'],
  ['Europe/London', '2027-10-31T01:30:00', '2027-10-31T00:30:00.000Z', 'repeated hour → first occurrence (BST)'],
  ['Europe/London', '2027-10-31T02:30:00', '2027-10-31T02:30:00.000Z', 'after fall-back (GMT)'],
  // Europe/Berlin: 2027-03-28 02:00 CET → 03:00 CEST; 2027-10-31 03:00 CEST → 02:00 CET.
  ['Europe/Berlin', '2027-03-28T02:30:00', '2027-03-28T01:30:00.000Z', 'skipped hour → 03:30 CEST'],
  ['Europe/Berlin', '2027-03-28T03:30:00', '2027-03-28T01:30:00.000Z', 'after spring-forward (CEST)'],
  ['Europe/Berlin', '2027-10-31T02:30:00', '2027-10-31T00:30:00.000Z', 'repeated hour → first occurrence (CEST)'],
  ['Europe/Berlin', '2027-10-31T03:30:00', '2027-10-31T02:30:00.000Z', 'after fall-back (CET)'],
  // Australia/Sydney (southern hemisphere): 2027-04-04 03:00 AEDT → 02:00 AEST; 2027-10-03 02:00 AEST → 03:00 AEDT.
  ['Australia/Sydney', '2027-04-04T01:30:00', '2027-04-03T14:30:00.000Z', 'before fall-back (AEDT)'],
  ['Australia/Sydney', '2027-04-04T02:30:00', '2027-04-03T15:30:00.000Z', 'repeated hour → first occurrence (AEDT)'],
  ['Australia/Sydney', '2027-04-04T03:30:00', '2027-04-03T17:30:00.000Z', 'after fall-back (AEST)'],
  ['Australia/Sydney', '2027-10-03T02:30:00', '2027-10-02T16:30:00.000Z', 'skipped hour → 03:30 AEDT'],
  ['Australia/Sydney', '2027-10-03T03:30:00', '2027-10-02T16:30:00.000Z', 'after spring-forward (AEDT)'],
  // Pacific/Chatham (+12:45 / +13:45): 2027-04-04 03:45 → 02:45; 2027-09-26 02:45 → 03:45.
  ['Pacific/Chatham', '2027-04-04T03:00:00', '2027-04-03T13:15:00.000Z', 'repeated 45-minute-offset hour → first occurrence (+13:45)'],
  ['Pacific/Chatham', '2027-04-04T04:00:00', '2027-04-03T15:15:00.000Z', 'after fall-back (+12:45)'],
  ['Pacific/Chatham', '2027-09-26T03:00:00', '2027-09-25T14:15:00.000Z', 'skipped hour → 04:00 +13:45'],
  // Asia/Kolkata (+05:30, no DST): the same wall times are plain.
  ['Asia/Kolkata', '2027-03-14T02:30:00', '2027-03-13T21:00:00.000Z', 'no DST'],
  ['Asia/Kolkata', '2027-11-07T01:30:00', '2027-11-06T20:00:00.000Z', 'no DST'],
];

describe('time: offset-less scheduledFor in project timezones, and the AI budget resets', function () {
  this.timeout(60_000);
  const api = useApi();
  const previousLimits = { ...config.rateLimit };
  before(async () => {
    Object.assign(config.rateLimit, { writePerWindow: 1_000_000, readPerWindow: 1_000_000 });
  });
  after(async () => {
    Object.assign(config.rateLimit, previousLimits);
  });

  for (const zone of [...new Set(CASES.map((c) => c[0]))]) {
    it(`${zone}: POST /v1/posts reads offset-less times as the zone's wall time`, async () => {
      const { key, project } = await workspaceWithKey({ timezone: zone });
      const call = client(api.url, key);
      for (const [, local, utc, what] of CASES.filter((c) => c[0] === zone)) {
        const res = await call('POST', '/v1/posts', { body: { projectId: project.id, content: what, scheduledFor: local } });
        assert.equal(res.status, 200, `${local} (${what}): ${JSON.stringify(res.body)}`);
        assert.equal(new Date(res.body.data.scheduledAt).toISOString(), utc, `${zone} ${local}: ${what}`);
        // An explicit offset is never reinterpreted in the zone.
        const explicit = await call('POST', '/v1/posts', { body: { projectId: project.id, scheduledFor: `${local}Z` } });
        assert.equal(new Date(explicit.body.data.scheduledAt).toISOString(), `${local}.000Z`);
      }
    });
  }

  it('refuses wall times that are not on any calendar (422), in any zone', async () => {
    const { key, project } = await workspaceWithKey({ timezone: 'Europe/Berlin' });
    for (const bad of ['2027-02-29T09:00:00', '2027-03-28T24:00:00', '2027-03-28T02:60:00', '2027-13-01T09:00:00', '2027-03-28']) {
      const res = await client(api.url, key)('POST', '/v1/posts', { body: { projectId: project.id, scheduledFor: bad } });
      assert.equal(res.status, 422, `${bad}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'unprocessable');
    }
  });

  describe('AI budget periods (spec 8: weekly from Monday 00:00 UTC, daily from 00:00 UTC)', () => {
    it("turn over exactly at Monday 00:00 UTC and at midnight UTC, whatever the instant's local offset", () => {
      const sunday = periodsAt(new Date('2027-03-14T23:59:59.999Z'));
      const monday = periodsAt(new Date('2027-03-15T00:00:00.000Z'));
      assert.deepEqual(sunday, { day: '2027-03-14', week: '2027-03-08', weekResetsAt: '2027-03-15T00:00:00.000Z' });
      assert.deepEqual(monday, { day: '2027-03-15', week: '2027-03-15', weekResetsAt: '2027-03-22T00:00:00.000Z' });
      // Monday 09:00 in Sydney is still Sunday in UTC: the old week.
      assert.equal(periodsAt(new Date('2027-03-15T09:00:00+11:00')).week, '2027-03-08');
      // Sunday 20:00 in New York is Monday in UTC: the new week.
      assert.equal(periodsAt(new Date('2027-03-14T20:00:00-04:00')).week, '2027-03-15');
      // Midnight UTC on a weekday changes the day but not the week; across a year end too.
      assert.deepEqual(periodsAt(new Date('2027-03-16T23:59:59.999Z')).day, '2027-03-16');
      assert.deepEqual(periodsAt(new Date('2027-03-17T00:00:00.000Z')).day, '2027-03-17');
      assert.deepEqual(periodsAt(new Date('2027-12-31T23:59:59.999Z')), {
        day: '2027-12-31',
        week: '2027-12-27',
        weekResetsAt: '2028-01-03T00:00:00.000Z',
      });
      assert.deepEqual(periodsAt(new Date('2028-01-01T00:00:00.000Z')), {
        day: '2028-01-01',
        week: '2027-12-27',
        weekResetsAt: '2028-01-03T00:00:00.000Z',
      });
    });

    it("GET /v1/usage counts only this UTC week's and this UTC day's spend", async () => {
      const { key, workspace, project } = await workspaceWithKey({ timezone: 'Pacific/Chatham' });
      await db()('workspaces').where({ id: workspace.id }).update({ weekly_ai_budget_cents: 1000, daily_spend_cap_cents: 1000 });
      const now = periodsAt(new Date());
      const lastWeek = new Date(Date.parse(`${now.week}T00:00:00Z`) - 7 * 86_400_000).toISOString().slice(0, 10);
      const yesterday = new Date(Date.parse(`${now.day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
      // Last week's budget and yesterday's spend are used up: they must not count now.
      await db()('ai_budget_weeks').insert([
        { workspace_id: workspace.id, budget_key: project.id, week_start: lastWeek, spent_cents: 1000, reserved_cents: 0 },
        { workspace_id: workspace.id, budget_key: POOL_KEY, week_start: lastWeek, spent_cents: 1000, reserved_cents: 0 },
      ]);
      await db()('ai_spend_days').insert({ workspace_id: workspace.id, bucket_date: yesterday, spent_cents: 1000, reserved_cents: 0 });
      const fresh = (await client(api.url, key)('GET', `/v1/usage?projectId=${project.id}`)).body.data;
      assert.equal(fresh.ai.percentUsed, 0);
      assert.equal(fresh.ai.weekStart, now.week);
      assert.equal(fresh.apiSpend.bucketDate, now.day);
      assert.equal(fresh.apiSpend.spentCents, 0);
      assert.equal(fresh.canGenerate, true);
      // This week's and today's rows do count.
      await db()('ai_budget_weeks').insert({
        workspace_id: workspace.id,
        budget_key: project.id,
        week_start: now.week,
        spent_cents: 500,
        reserved_cents: 0,
      });
      await db()('ai_spend_days').insert({ workspace_id: workspace.id, bucket_date: now.day, spent_cents: 250, reserved_cents: 0 });
      const used = (await client(api.url, key)('GET', `/v1/usage?projectId=${project.id}`)).body.data;
      assert.equal(used.ai.percentUsed, 50);
      assert.equal(used.apiSpend.spentCents, 250);
    });
  });
});
