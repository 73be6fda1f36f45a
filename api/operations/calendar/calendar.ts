import { db } from '../../../lib/db';
import { errors } from '../../../lib/errors';
import { CalendarSlot, Idea, Post, Project } from '../../../lib/models';
import { DERIVED_STATUS_SQL } from '../../../lib/ideas/ideas';
import { holds } from '../../../lib/scopes';
import { localDateTime, parseInZone } from '../../../lib/time';
import { defineOperation } from '../../operation';
import { calendarSchema, listCalendarInput } from './schema';
import { single } from '../../output';
import { projectName } from '../../../lib/presenters/projects';

// GET /v1/calendar and list_calendar (spec 4.1 names the endpoint; 4.9 the tool; 5.4 the
// client view). docs/calendar.md has the rules: a bounded range of calendar days read in each
// project's own timezone, holding scheduled and published posts at their times, drafts that
// hold a slot, notes with their slots and ideas on their dates, each entry typed with its id.
//
// Scopes: posts:read (every entry type is about posts or their plans). Notes are included only
// for a credential that also holds notes:read, ideas only with ideas:write (their own read
// rules, docs/ideas.md), so the calendar never shows what the list endpoints would refuse.

export const CALENDAR_MAX_DAYS = 62;
const DAY_MS = 86_400_000;
const MAX_ENTRIES = 5_000;

const addDays = (ymd: string, n: number) => new Date(Date.parse(`${ymd}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);

function todayIn(timeZone: string): string {
  return localDateTime(new Date(), timeZone).date;
}

interface CalendarProject {
  id: string;
  name: string;
  type: string;
  timezone: string;
  start: Date;
  end: Date;
}

/** A post, draft or note row placed at an instant, read as epoch milliseconds (`epochMs`). */
interface TimedRow {
  id: string;
  project_id: string;
  at: number;
  content_type: string;
}

interface TimedEntry {
  id: string;
  projectId: string;
  at: string;
  date: string;
  time: string;
  contentType: string;
}

export type CalendarEntry =
  | (TimedEntry & { type: 'post'; status: string; title: string })
  | (TimedEntry & { type: 'draft'; status: string; title: string; slotId: string })
  | (TimedEntry & { type: 'note'; content: string; slotId: string })
  | { type: 'idea'; id: string; projectId: string; date: string; title: string; status: string };

/** A post's calendar instant: its publish time once published, else its scheduled time. The index posts_calendar_entries (migration 20261201100200) holds this very expression: change both together. */
const POST_AT_SQL = `case when posts.status = 'published' then coalesce(posts.published_at, posts.scheduled_at) else posts.scheduled_at end`;

const TYPE_ORDER = { post: 0, draft: 1, note: 2, idea: 3 } as const;

/**
 * An instant selected as epoch milliseconds: a float8 the driver reads with parseFloat, where a
 * timestamptz is parsed into a Date field by field (a third of the calendar's CPU at 5,000
 * entries). The columns hold milliseconds (precision 3), so the number is exact.
 */
const epochMs = (sql: string) => db().raw(`round(extract(epoch from ${sql}) * 1000)::float8 as at`);

export const listCalendar = defineOperation({
  name: 'calendar.list',
  summary: 'Calendar entries of one project or of every visible project over a bounded range of days.',
  kind: 'read',
  scopes: { allOf: ['posts:read'] },
  clientRole: 'narrow',
  input: listCalendarInput,
  output: single(calendarSchema),
  handler: async ({ auth }, input) => {
    const q = Project.activeFor(auth)
      .leftJoin('network_connections as c', 'c.id', 'projects.connection_id')
      .select(
        'projects.id',
        'projects.type',
        'projects.display_name',
        'projects.slug',
        'projects.timezone',
        'c.display_name as c_display_name',
      )
      .orderBy([
        { column: 'projects.created_at', order: 'desc' },
        { column: 'projects.id', order: 'desc' },
      ]);
    if (input.projectId !== undefined) q.where('projects.id', input.projectId);
    const rows = await q.castTo<
      Array<{
        id: string;
        type: 'PERSONAL_BRAND' | 'COMPANY_PAGE' | 'AMPLIFIER';
        display_name: string | null;
        slug: string;
        timezone: string;
        c_display_name: string | null;
      }>
    >();
    if (input.projectId !== undefined && rows.length === 0) throw errors.notFound('project');

    // Defaults: from today (in the first project's zone, or UTC) for 7 days.
    const from = input.from ?? todayIn(rows[0]?.timezone ?? 'UTC');
    const to = input.to ?? addDays(from, 6);
    if (to < from) throw errors.invalidRequest('`to` must not be before `from`.', { from, to });
    const days = Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS) + 1;
    if (days > CALENDAR_MAX_DAYS)
      throw errors.invalidRequest(`The range covers ${days} days; at most ${CALENDAR_MAX_DAYS} can be read at once.`, {
        from,
        to,
        maxDays: CALENDAR_MAX_DAYS,
      });

    // Each project's range is its own calendar days: [from 00:00, to+1 00:00) in its timezone.
    const projects: CalendarProject[] = rows.map((r) => ({
      id: r.id,
      type: r.type,
      timezone: r.timezone,
      name: projectName(r),
      start: parseInZone(`${from}T00:00:00`, r.timezone),
      end: parseInZone(`${addDays(to, 1)}T00:00:00`, r.timezone),
    }));
    const body = {
      data: {
        from,
        to,
        maxDays: CALENDAR_MAX_DAYS,
        projects: projects.map((p) => ({ id: p.id, name: p.name, type: p.type, timezone: p.timezone })),
        entries: [] as CalendarEntry[],
        truncated: false,
      },
    };
    if (projects.length === 0) return body;
    const byId = new Map(projects.map((p) => [p.id, p]));
    const ids = projects.map((p) => p.id);
    const lo = new Date(Math.min(...projects.map((p) => p.start.getTime())));
    const hi = new Date(Math.max(...projects.map((p) => p.end.getTime())));
    const inWindow = (projectId: string, at: number) => {
      const p = byId.get(projectId)!;
      return at >= p.start.getTime() && at < p.end.getTime();
    };
    const timed = (r: TimedRow): TimedEntry => {
      const at = new Date(r.at);
      return {
        id: r.id,
        projectId: r.project_id,
        at: at.toISOString(),
        ...localDateTime(at, byId.get(r.project_id)!.timezone),
        contentType: r.content_type,
      };
    };
    const client = auth.role === 'client';
    const entries: CalendarEntry[] = [];
    // Each kind is read earliest first, at most MAX_ENTRIES + 1 of it, so a range holding more
    // than MAX_ENTRIES keeps its earliest entries and says `truncated`. Rows are read as plain
    // rows (`toKnexQuery`): no model instance is made for an entry.

    // Scheduled (and failed) posts at their scheduled time, published posts at their publish time.
    // spec 5.4: a client reads only the posts of its view, here as in the post list.
    const posts = Post.readableBy(auth)
      .whereIn('posts.project_id', ids)
      .whereNull('posts.deleted_at')
      .whereIn('posts.status', ['scheduled', 'published', 'failed_to_publish'])
      .whereRaw(`(${POST_AT_SQL}) >= ?`, [lo])
      .whereRaw(`(${POST_AT_SQL}) < ?`, [hi])
      .select('posts.id', 'posts.project_id', 'posts.status', 'posts.title', 'posts.content_type', epochMs(POST_AT_SQL))
      .orderByRaw(`${POST_AT_SQL}, posts.id`)
      .limit(MAX_ENTRIES + 1)
      .toKnexQuery<TimedRow & { status: string; title: string }>();
    // Posts not on the schedule that hold a calendar slot (a planned draft).
    // Calendar slots of the projects within [lo, hi), joined to what they plan (`posts` or `notes`).
    // The join implies the slot's column is set; said outright, it lets Postgres read the slots
    // of that kind alone (calendar_slots_posts / calendar_slots_notes, migration 20261201100000)
    // and know how many there are, rather than join every note of the database to all slots.
    const slots = (table: 'posts' | 'notes') =>
      CalendarSlot.forWorkspace(auth.workspaceId)
        .alias('s')
        .join(table, `${table}.id`, table === 'posts' ? 's.post_id' : 's.note_id')
        .whereNotNull(table === 'posts' ? 's.post_id' : 's.note_id')
        .whereIn('s.project_id', ids)
        .where('s.date', '>=', lo)
        .where('s.date', '<', hi);
    const drafts = slots('posts')
      .whereNull('posts.deleted_at')
      .whereNotIn('posts.status', ['scheduled', 'published', 'failed_to_publish'])
      .select('posts.id', 's.id as slot_id', 's.project_id', 'posts.status', 'posts.title', 's.content_type', epochMs('s.date'))
      .orderBy(['s.date', 's.id'])
      .limit(MAX_ENTRIES + 1);
    if (client) drafts.where(Post.inClientView(auth.workspaceId));
    const [postRows, draftRows] = await Promise.all([
      posts,
      drafts.toKnexQuery<TimedRow & { slot_id: string; status: string; title: string }>(),
    ]);
    for (const r of postRows)
      if (inWindow(r.project_id, r.at)) entries.push({ type: 'post', ...timed(r), status: r.status, title: r.title });
    for (const r of draftRows)
      if (inWindow(r.project_id, r.at)) entries.push({ type: 'draft', ...timed(r), slotId: r.slot_id, status: r.status, title: r.title });

    // spec 5.4: notes and ideas are left out of the client view.
    if (!client && holds(auth.scopes, 'notes:read')) {
      const notes = await slots('notes')
        .select(
          'notes.id',
          's.id as slot_id',
          's.project_id',
          's.content_type',
          epochMs('s.date'),
          db().raw('left(notes.content, 280) as content'),
        )
        .orderBy(['s.date', 's.id'])
        .limit(MAX_ENTRIES + 1)
        .toKnexQuery<TimedRow & { slot_id: string; content: string }>();
      for (const r of notes)
        if (inWindow(r.project_id, r.at)) entries.push({ type: 'note', ...timed(r), slotId: r.slot_id, content: r.content });
    }
    if (!client && holds(auth.scopes, 'ideas:write')) {
      const ideas = await Idea.forWorkspace(auth.workspaceId)
        .whereIn('ideas.project_id', ids)
        .leftJoin('posts as lp', (j) => j.on('lp.id', 'ideas.linked_post_id').andOnNull('lp.deleted_at'))
        .leftJoin('post_statuses as ls', 'ls.id', 'lp.status_id')
        .where('ideas.scheduled_for', '>=', from)
        .where('ideas.scheduled_for', '<=', to)
        .select(
          'ideas.id',
          'ideas.project_id',
          'ideas.title',
          db().raw(`to_char(ideas.scheduled_for, 'YYYY-MM-DD') as date`),
          db().raw(`(${DERIVED_STATUS_SQL}) as status`),
        )
        .orderBy(['ideas.scheduled_for', 'ideas.id'])
        .limit(MAX_ENTRIES + 1)
        .castTo<Array<{ id: string; project_id: string; title: string; date: string; status: string }>>();
      for (const r of ideas)
        entries.push({ type: 'idea', id: r.id, projectId: r.project_id, date: r.date, title: r.title, status: r.status });
    }

    // Day by day; within a day timed entries by instant, then date-only ideas; ties by type and
    // id. One text key per entry, compared as text: the date, the instant (every `at` is a
    // `toISOString()` of one length, so text order is time order; '~' sorts after it), the type.
    const sorted = entries
      .map((e) => ({ e, key: `${e.date}${'at' in e ? e.at : '~'}${TYPE_ORDER[e.type]}${e.id}` }))
      .sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
    body.data.truncated = sorted.length > MAX_ENTRIES;
    body.data.entries = sorted.slice(0, MAX_ENTRIES).map((k) => k.e);
    return body;
  },
});
