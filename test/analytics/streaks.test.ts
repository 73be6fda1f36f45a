import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Temporal } from 'temporal-polyfill';
import { createProject, issueApiKey } from '../../admin/provision';
import { db } from '../../lib/db';
import { newId } from '../../lib/ids';
import { localWeekStart, publishWeeks, streakFromWeeks } from '../../lib/streaks';
import { client, useApi } from '../support/app';
import { workspaceWithKey } from '../support/factories';

// spec 2.4 streaks from the publish history: consecutive ISO weeks in the project's calendar
// timezone with at least one published post (docs/analytics.md "Streaks").

const DAY = 86_400_000;

describe('streaks (spec 2.4)', () => {
  const api = useApi();

  it('counts runs of consecutive weeks; the current week may still be empty', () => {
    const cur = '2031-03-10';
    assert.equal(streakFromWeeks([], cur), null);
    assert.deepEqual(streakFromWeeks(['2031-03-10'], cur), { currentStreak: 1, longestStreak: 1 });
    assert.deepEqual(streakFromWeeks(['2031-03-03', '2031-02-24'], cur), { currentStreak: 2, longestStreak: 2 }, 'last week still counts');
    assert.deepEqual(streakFromWeeks(['2031-02-24', '2031-02-17'], cur), { currentStreak: 0, longestStreak: 2 }, 'a whole week missed');
    assert.deepEqual(streakFromWeeks(['2031-03-10', '2031-03-03', '2031-02-17', '2031-02-10', '2031-02-03', '2031-03-03'], cur), {
      currentStreak: 2,
      longestStreak: 3,
    });
    // Across a year boundary (2030-12-30 is the Monday of ISO week 1 of 2031).
    assert.deepEqual(streakFromWeeks(['2030-12-23', '2030-12-30', '2031-01-06'], '2031-01-06'), { currentStreak: 3, longestStreak: 3 });
    assert.equal(localWeekStart(new Date('2031-03-09T23:30:00Z'), 'UTC'), '2031-03-03');
    assert.equal(localWeekStart(new Date('2031-03-09T23:30:00Z'), 'Asia/Tokyo'), '2031-03-10', 'Monday 08:30 in Tokyo');
    assert.equal(localWeekStart(new Date('2031-03-10T05:00:00Z'), 'America/Los_Angeles'), '2031-03-03', 'still Sunday in Los Angeles');
  });

  it('the local week’s Monday is the one the zone’s own calendar names, on every day of the week', () => {
    // The oracle: Temporal's zone arithmetic and ISO weekday (Monday is 1).
    const reference = (at: Date, timeZone: string) => {
      const day = Temporal.Instant.fromEpochMilliseconds(at.getTime()).toZonedDateTimeISO(timeZone).toPlainDate();
      return day.subtract({ days: day.dayOfWeek - 1 }).toString();
    };
    const zones = [
      'UTC',
      'Asia/Tokyo',
      'America/Los_Angeles',
      'Pacific/Kiritimati',
      'Pacific/Pago_Pago',
      'Australia/Lord_Howe',
      'Europe/Berlin',
    ];
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2060, 0, 1) }), fc.constantFrom(...zones), (ms, zone) => {
        assert.equal(localWeekStart(new Date(ms), zone), reference(new Date(ms), zone), `${new Date(ms).toISOString()} in ${zone}`);
      }),
      { numRuns: 5_000 },
    );
  });

  it('GET /v1/workspaces/context: weeks in the project timezone, null for company pages and no history', async () => {
    const ws = await workspaceWithKey();
    const tokyo = await createProject({ workspaceId: ws.workspace.id, type: 'PERSONAL_BRAND', name: 'Tokyo', timezone: 'Asia/Tokyo' });
    const utc = await createProject({ workspaceId: ws.workspace.id, type: 'PERSONAL_BRAND', name: 'UTC twin', timezone: 'UTC' });
    const page = await createProject({ workspaceId: ws.workspace.id, type: 'COMPANY_PAGE', name: 'Page', connection: 'none' });
    const lapsed = await createProject({
      workspaceId: ws.workspace.id,
      type: 'AMPLIFIER',
      name: 'Lapsed',
      timezone: 'America/Los_Angeles',
    });
    const draftsOnly = await createProject({ workspaceId: ws.workspace.id, type: 'PERSONAL_BRAND', name: 'Drafts only' });

    // Monday 00:30 Tokyo of this Tokyo week is Sunday 15:30 UTC: the previous UTC week.
    const tokyoMonday = Date.parse(`${localWeekStart(new Date(), 'Asia/Tokyo')}T00:00:00Z`) - 9 * 3_600_000;
    const instants = [
      new Date(tokyoMonday + 30 * 60_000), // this Tokyo week (Monday 00:30 local)
      new Date(tokyoMonday - 30 * 60_000), // last Tokyo week (Sunday 23:30 local), same UTC week as the first
      new Date(tokyoMonday - 7 * DAY - 30 * 60_000), // the Tokyo week before
    ];
    const published = (projectId: string, at: Date, status = 'published') => ({
      id: newId('post'),
      workspace_id: ws.workspace.id,
      project_id: projectId,
      status,
      title: '',
      content: 'x',
      content_type: 'PERSONAL',
      published_at: status === 'published' ? at : null,
    });
    await db()('posts').insert([
      ...instants.map((at) => published(tokyo.id, at)),
      ...instants.map((at) => published(utc.id, at)),
      ...instants.map((at) => published(page.id, at)),
      // Los Angeles: three weeks in a row, ending three weeks ago.
      ...[3, 4, 5].map((k) =>
        published(
          lapsed.id,
          new Date(Date.parse(`${localWeekStart(new Date(), 'America/Los_Angeles')}T12:00:00Z`) + 8 * 3_600_000 - k * 7 * DAY),
        ),
      ),
      published(draftsOnly.id, new Date(), 'draft'),
      published(draftsOnly.id, new Date(), 'scheduled'),
    ]);
    const key = (await issueApiKey({ workspaceId: ws.workspace.id, scopes: ['workspace:read'] })).key;
    const res = await client(api.url, key)('GET', '/v1/workspaces/context');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const streak = Object.fromEntries(res.body.data.projects.map((p: { id: string; streak: unknown }) => [p.id, p.streak]));
    assert.deepEqual(streak[tokyo.id], { currentStreak: 3, longestStreak: 3 }, 'three Tokyo weeks');
    // The same instants read in UTC fall in two weeks only (the first two share a UTC week), and
    // the UTC week holding "now" may be the next one: the run is 2 either way.
    assert.equal(streak[utc.id].longestStreak, 2);
    assert.equal(streak[page.id], null, 'company pages have no streak');
    assert.deepEqual(streak[lapsed.id], { currentStreak: 0, longestStreak: 3 });
    assert.equal(streak[draftsOnly.id], null, 'nothing published yet');
    assert.equal(streak[ws.project.id], null);
  });

  it('the weeks read by the index probes are the weeks of every published post, in any zone (property)', async () => {
    // The oracle is the plain aggregate over every post. The zones include week starts that a
    // clock change makes ambiguous or skips (Havana and Santiago change at midnight), and posts
    // gather around Monday 00:00 local, where a week boundary read wrongly would show.
    const ws = await workspaceWithKey({ projects: 0 });
    const zones = ['UTC', 'Asia/Tokyo', 'America/Havana', 'America/Santiago', 'Asia/Beirut', 'Australia/Lord_Howe', 'Europe/Berlin'];
    const oracle = async (projectId: string) =>
      (
        (await db()('posts as po')
          .join('projects as pr', 'pr.id', 'po.project_id')
          .where('po.project_id', projectId)
          .where('po.status', 'published')
          .whereNotNull('po.published_at')
          .distinct(db().raw(`to_char(date_trunc('week', po.published_at at time zone pr.timezone), 'YYYY-MM-DD') as monday`))
          .orderBy('monday', 'desc')) as Array<{ monday: string }>
      ).map((r) => r.monday);
    const HOUR = 3_600_000;
    const instant = fc.oneof(
      fc.integer({ min: Date.UTC(2015, 0, 1), max: Date.UTC(2030, 0, 1) }),
      // Within a day of a UTC Monday midnight.
      fc
        .tuple(fc.integer({ min: 0, max: 780 }), fc.integer({ min: -26 * HOUR, max: 26 * HOUR }))
        .map(([week, off]) => Date.UTC(2015, 0, 5) + week * 7 * DAY + off),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...zones),
        fc.array(fc.record({ at: instant, status: fc.constantFrom('published', 'published', 'published', 'draft') }), {
          maxLength: 40,
        }),
        async (timezone, posts) => {
          const project = await createProject({ workspaceId: ws.workspace.id, type: 'PERSONAL_BRAND', name: 'P', timezone });
          if (posts.length > 0)
            await db()('posts').insert(
              posts.map((p) => ({
                id: newId('post'),
                workspace_id: ws.workspace.id,
                project_id: project.id,
                status: p.status,
                title: '',
                content: 'x',
                content_type: 'PERSONAL',
                published_at: p.status === 'published' ? new Date(p.at) : null,
              })),
            );
          const weeks = (await publishWeeks([project.id])).get(project.id) ?? [];
          assert.deepEqual([...new Set(weeks)], await oracle(project.id), `${timezone}: ${posts.map((p) => new Date(p.at).toISOString())}`);
        },
      ),
      { numRuns: 60 },
    );
  });
});
