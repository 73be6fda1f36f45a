import type { Knex } from 'knex';
import { db, readPrepared, shapedRead } from '../../../lib/db';
import { errors } from '../../../lib/errors';
import { CalendarSlot, Idea, Post, Project, reachParams, reachShape, reachValues } from '../../../lib/models';
import { DERIVED_STATUS_SQL } from '../../../lib/ideas/ideas';
import { holds } from '../../../lib/scopes';
import { localDateTime, parseInZone, wallClockMs, wallDateTime } from '../../../lib/time';
import { defineOperation } from '../../operation';
import { calendarSchema, listCalendarInput } from './schema';
import { single } from '../../output';
import { projectName } from '../../../lib/presenters/projects';
import { decodeSortCursor, encodeSortCursor, parseLimit } from '../../pagination';

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
/** The most entries one answer holds, and its default (`limit`). */
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

/** A post's calendar instant: its publish time once published, else its scheduled time. The index posts_calendar_entries (migrations 20261201100200 and 20261205100000) holds this very expression: change both together. */
const POST_AT_SQL = `case when posts.status = 'published' then coalesce(posts.published_at, posts.scheduled_at) else posts.scheduled_at end`;

/**
 * An instant selected as epoch milliseconds: a float8 the driver reads with parseFloat, where a
 * timestamptz is parsed into a Date field by field (a third of the calendar's CPU at 5,000
 * entries). The columns hold milliseconds (precision 3), so the number is exact.
 */
const epochMs = (sql: string) => db().raw(`round(extract(epoch from ${sql}) * 1000)::float8 as at`);

type ReachParam = 'workspaceId' | 'projectIds';
/** What the reads of posts and drafts are shaped by: the reader's narrowing to projects (reachShape), and whether it is a client. */
type CalendarShape = { projects: number | null; client: boolean };

/**
 * The calendar's reads, each compiled once per shape (lib/db.ts `shapedRead`) and read as a
 * prepared statement: built per request, their builders and knex's runner were a tenth of the
 * API's CPU for a month of 5,000 entries.
 */
const projectsRead = shapedRead(
  (shape: { projects: number | null; one: boolean }, param: (name: ReachParam | 'projectId', index?: number) => string) => {
    const q = Project.activeFor(reachParams(shape.projects, param))
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
    if (shape.one) q.where('projects.id', param('projectId'));
    return q.toKnexQuery();
  },
);

/**
 * Ids are compared bytewise wherever a read orders them or starts after one: Node merges the
 * reads and compares ids code unit by code unit, which for ids (ASCII) is the "C" collation,
 * whatever the database's own (migration 20261206100000). In another collation a cursor's read
 * would start after its entry in a different order than the page was cut in, and skip entries.
 */
const BYTEWISE = 'collate "C"';

type EntryParam = ReachParam | 'projects' | 'afterAt' | 'afterId' | 'beforeAt' | 'rows';

/**
 * The statuses of the posts on the schedule, written into the text: a prepared statement's
 * generic plan can then prove the partial index posts_calendar_entries (which holds exactly
 * these) applies, as it could not with the statuses bound.
 */
const ON_SCHEDULE_SQL = `('scheduled', 'published', 'failed_to_publish')`;

/**
 * Each timed kind (posts, drafts, notes) is read project by project, in its index's order: for
 * every project the rows after a position of its own (`after_at`, `after_id`: the first page's
 * start of the range, or where the cursor's entry leaves that project's rows: `projectStart`)
 * and before the end of its range, at most `rows` (the page's limit + 1). One statement per
 * kind, whatever the number of projects: the projects and their bounds are arrays, each project's
 * read a LATERAL subquery that the kind's index (workspace, project, instant, id) serves as a
 * range, so a page costs its rows, not the rows of the range before it. `inner` reads one
 * project's rows at the instant `at` (SQL), joined to `b`, the project's bounds.
 */
function perProject(inner: Knex.QueryBuilder, at: string, id: string, param: (name: EntryParam) => string): Knex.QueryBuilder {
  inner
    .whereRaw(`(${at}, ${id} ${BYTEWISE}) > (b.after_at, b.after_id)`)
    .whereRaw(`${at} < b.before_at`)
    .orderByRaw(`${at}, ${id} ${BYTEWISE}`);
  return db()
    .select('x.*')
    .from(
      db().raw('unnest(?::text[], ?::timestamptz[], ?::text[], ?::timestamptz[]) as b(project_id, after_at, after_id, before_at)', [
        param('projects'),
        param('afterAt'),
        param('afterId'),
        param('beforeAt'),
      ]),
    )
    .joinRaw('cross join lateral (? limit ?) as x', [inner as unknown as Knex.Value, param('rows')]);
}

/** Scheduled (and failed) posts at their scheduled time, published posts at their publish time; spec 5.4: a client reads only the posts of its view, as in the post list. */
const postsRead = shapedRead((shape: CalendarShape, param: (name: EntryParam, index?: number) => string) =>
  perProject(
    Post.readableBy({ ...reachParams(shape.projects, param), role: shape.client ? 'client' : 'member' })
      .whereRaw('posts.project_id = b.project_id')
      .whereNull('posts.deleted_at')
      .whereRaw(`posts.status in ${ON_SCHEDULE_SQL}`)
      .select('posts.id', 'posts.project_id', 'posts.status', 'posts.title', 'posts.content_type', epochMs(POST_AT_SQL))
      .toKnexQuery(),
    `(${POST_AT_SQL})`,
    'posts.id',
    param,
  ),
);

/**
 * Calendar slots of a project, joined to what they plan (`posts` or `notes`). The join implies
 * the slot's column is set; said outright, it lets Postgres read the slots of that kind alone
 * (calendar_slots_posts / calendar_slots_notes, migrations 20261201100000, 20261205100000 and
 * 20261206100000) and know how many there are, rather than join every note of the database to
 * all slots.
 */
const slotsOf = (table: 'posts' | 'notes', param: (name: EntryParam) => string) =>
  CalendarSlot.forWorkspace(param('workspaceId'))
    .alias('s')
    .join(table, `${table}.id`, table === 'posts' ? 's.post_id' : 's.note_id')
    .whereNotNull(table === 'posts' ? 's.post_id' : 's.note_id')
    .whereRaw('s.project_id = b.project_id');

/** Posts not on the schedule that hold a calendar slot (a planned draft). */
const draftsRead = shapedRead((shape: CalendarShape, param: (name: EntryParam, index?: number) => string) => {
  const q = slotsOf('posts', param)
    .whereNull('posts.deleted_at')
    .whereRaw(`posts.status not in ${ON_SCHEDULE_SQL}`)
    .select('posts.id', 's.id as slot_id', 's.project_id', 'posts.status', 'posts.title', 's.content_type', epochMs('s.date'));
  if (shape.client) q.where(Post.inClientView(param('workspaceId')));
  return perProject(q.toKnexQuery(), 's.date', 's.id', param);
});

/** Notes at their slots (never in the client view). */
const notesRead = shapedRead((_shape: 'notes', param: (name: EntryParam, index?: number) => string) =>
  perProject(
    slotsOf('notes', param)
      .select(
        'notes.id',
        's.id as slot_id',
        's.project_id',
        's.content_type',
        epochMs('s.date'),
        db().raw('left(notes.content, 280) as content'),
      )
      .toKnexQuery(),
    's.date',
    's.id',
    param,
  ),
);

/** Ideas on their dates (never in the client view), after a date and id (the range's first day and '', or the cursor's), up to `to`, at most `rows`. */
const ideasRead = shapedRead(
  (ids: number, param: (name: 'workspaceId' | 'ids' | 'afterDate' | 'afterId' | 'to' | 'rows', index?: number) => string) =>
    db().raw('? limit ?', [
      Idea.forWorkspace(param('workspaceId'))
        .whereIn(
          'ideas.project_id',
          Array.from({ length: ids }, (_, i) => param('ids', i)),
        )
        .leftJoin('posts as lp', (j) => j.on('lp.id', 'ideas.linked_post_id').andOnNull('lp.deleted_at'))
        .leftJoin('post_statuses as ls', 'ls.id', 'lp.status_id')
        .whereRaw(`(ideas.scheduled_for, ideas.id ${BYTEWISE}) > (?::date, ?)`, [param('afterDate'), param('afterId')])
        .where('ideas.scheduled_for', '<=', param('to'))
        .select(
          'ideas.id',
          'ideas.project_id',
          'ideas.title',
          db().raw(`to_char(ideas.scheduled_for, 'YYYY-MM-DD') as date`),
          db().raw(`(${DERIVED_STATUS_SQL}) as status`),
        )
        .orderByRaw(`ideas.scheduled_for, ideas.id ${BYTEWISE}`)
        .toKnexQuery(),
      param('rows'),
    ]),
);

type PostRow = TimedRow & { status: string; title: string };
type DraftRow = TimedRow & { slot_id: string; status: string; title: string };
type NoteRow = TimedRow & { slot_id: string; content: string };
type IdeaRow = { id: string; project_id: string; title: string; date: string; status: string };

/**
 * A row read for the calendar, placed before it becomes an entry: only the MAX_ENTRIES kept
 * are made into entries. `day` is the local calendar day (days since the epoch), `at` the
 * instant (Infinity for a date-only idea: last in its day), `wall` the local wall-clock time.
 */
type Placed =
  | { day: number; at: number; order: 0; wall: number; row: PostRow }
  | { day: number; at: number; order: 1; wall: number; row: DraftRow }
  | { day: number; at: number; order: 2; wall: number; row: NoteRow }
  | { day: number; at: number; order: 3; wall: number; row: IdeaRow };

/** The id an entry's ties are broken by: the slot's for drafts and notes, whose reads run in slot order (date, slot id). */
const tieId = (p: Placed) => (p.order === 1 || p.order === 2 ? p.row.slot_id : p.row.id);

/** Day by day; within a day timed entries by instant, then date-only ideas; ties by type, then id (tieId). */
const byPlace = (x: Placed, y: Placed) => {
  const d = x.day - y.day || (x.at === y.at ? 0 : x.at < y.at ? -1 : 1) || x.order - y.order;
  if (d !== 0) return d;
  const a = tieId(x);
  const b = tieId(y);
  return a < b ? -1 : a > b ? 1 : 0;
};

/** Where an entry stands in the calendar's order: what a cursor carries (the last entry returned). */
interface Position {
  day: number;
  /** The instant, in epoch milliseconds; null for a date-only idea (last in its day). */
  at: number | null;
  order: 0 | 1 | 2 | 3;
  id: string;
}

const positionOf = (p: Placed): Position => ({ day: p.day, at: p.order === 3 ? null : p.at, order: p.order, id: tieId(p) });

/** A cursor's value (lib/tokens.ts sort cursor): `day:at:order`, the id beside it. */
const positionValue = (p: Position) => `${p.day}:${p.at ?? ''}:${p.order}`;

function readPosition(value: string | number, id: string): Position {
  const m = /^(-?\d+):(-?\d*):([0-3])$/.exec(String(value));
  if (!m) throw errors.badCursor();
  return { day: Number(m[1]), at: m[2] === '' ? null : Number(m[2]), order: Number(m[3]) as Position['order'], id };
}

/** A day number (days since the epoch) as `YYYY-MM-DD`. */
const ymdOf = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);

/**
 * Where a project's rows start on this page, for every timed kind at once: the start of its
 * range on the first page; after a cursor, the first instant the calendar's order puts wholly
 * after the cursor's entry, or null when the cursor's instant falls inside the project's day of
 * the cursor (then each kind starts at the cursor's own position: `kindStart`). A project's
 * calendar day is its own, so the order between projects is by local day first: the rows of
 * day c of project q stand after the cursor's entry (day c, instant a) when they come later in
 * (instant, type, id), and every row of a later day of q does, even one at an instant before a
 * when q's days begin before the cursor's project's. Within q, instant order is day order, so
 * each kind's start is one position in q's (instant, id) order.
 */
function projectStart(project: CalendarProject, after: Position | null): number | null {
  const start = project.start.getTime();
  if (after === null) return start;
  const dayStart = (day: number) => parseInZone(`${ymdOf(day)}T00:00:00`, project.timezone).getTime();
  const next = dayStart(after.day + 1);
  // After a date-only idea the cursor's day is over.
  if (after.at === null || next <= after.at) return Math.max(next, start);
  const begins = dayStart(after.day);
  return begins > after.at ? Math.max(begins, start) : null;
}

/**
 * A timed kind's start at the cursor's own position (instant a, kind o, id i): after (a, i) in
 * its own kind, from a in a later kind, after a in an earlier one. (instant, '') stands before
 * every row at that instant (ids are never empty); the columns hold whole milliseconds, so the
 * rows after an instant start at (instant + 1 ms, '').
 */
function kindStart(order: 0 | 1 | 2, after: Position & { at: number }): [at: number, id: string] {
  if (order === after.order) return [after.at, after.id];
  return order > after.order ? [after.at, ''] : [after.at + 1, ''];
}

/** The entry of a placed row, written out field by field (no spread: docs in lib/analytics/overview.ts `postFigures`). */
function entryOf(p: Placed): CalendarEntry {
  if (p.order === 3)
    return { type: 'idea', id: p.row.id, projectId: p.row.project_id, date: p.row.date, title: p.row.title, status: p.row.status };
  const { date, time } = wallDateTime(p.wall);
  const at = new Date(p.at).toISOString();
  const r = p.row;
  if (p.order === 0)
    return {
      type: 'post',
      id: r.id,
      projectId: r.project_id,
      at,
      date,
      time,
      contentType: r.content_type,
      status: p.row.status,
      title: p.row.title,
    };
  if (p.order === 1)
    return {
      type: 'draft',
      id: r.id,
      projectId: r.project_id,
      at,
      date,
      time,
      contentType: r.content_type,
      slotId: p.row.slot_id,
      status: p.row.status,
      title: p.row.title,
    };
  return {
    type: 'note',
    id: r.id,
    projectId: r.project_id,
    at,
    date,
    time,
    contentType: r.content_type,
    slotId: p.row.slot_id,
    content: p.row.content,
  };
}

export const listCalendar = defineOperation({
  name: 'calendar.list',
  summary: 'Calendar entries of one project or of every visible project over a bounded range of days, a page at a time.',
  kind: 'read',
  scopes: { allOf: ['posts:read'] },
  clientRole: 'narrow',
  input: listCalendarInput,
  output: single(calendarSchema),
  handler: async ({ auth }, input) => {
    const limit = parseLimit(input.limit, MAX_ENTRIES, MAX_ENTRIES);
    const reach = reachValues(auth);
    const one = input.projectId !== undefined;
    const rows = await readPrepared<{
      id: string;
      type: 'PERSONAL_BRAND' | 'COMPANY_PAGE' | 'AMPLIFIER';
      display_name: string | null;
      slug: string;
      timezone: string;
      c_display_name: string | null;
    }>(projectsRead({ projects: reachShape(auth), one }, { ...reach, projectId: input.projectId }));
    if (one && rows.length === 0) throw errors.notFound('project');

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
    // A cursor reads on in the range it was minted for, for the workspace and role it was minted
    // for (spec 5.4 reads the role live: a view that changed mid-walk starts again), bad_cursor otherwise.
    const filters = { resource: 'calendar', workspaceId: auth.workspaceId, role: auth.role, projectId: input.projectId ?? null, from, to };
    const cursor = await decodeSortCursor(input.cursor, filters);
    const after = cursor && readPosition(cursor.value, cursor.id);

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
        nextCursor: null as string | null,
      },
    };
    if (projects.length === 0) return body;
    const byId = new Map(projects.map((p) => [p.id, p]));
    const ids = projects.map((p) => p.id);
    const client = auth.role === 'client';
    const shape: CalendarShape = { projects: reachShape(auth), client };
    // Each kind's projects with the bounds of their rows (projectStart, kindStart), at most
    // limit + 1 rows each.
    const starts = projects.map((p) => projectStart(p, after));
    const values = (order: 0 | 1 | 2) => {
      const bounds = starts.map((at): [number, string] => (at !== null ? [at, ''] : kindStart(order, after as Position & { at: number })));
      return {
        ...reach,
        projects: ids,
        afterAt: bounds.map(([at]) => new Date(at).toISOString()),
        afterId: bounds.map(([, id]) => id),
        beforeAt: projects.map((p) => p.end.toISOString()),
        rows: limit + 1,
      };
    };
    // Ideas after the cursor's day (all of it after a timed entry: ideas are last in their day).
    const afterDate = after ? ymdOf(after.day) : from;
    const ideasAfter = { afterDate, afterId: after?.order === 3 ? after.id : '' };
    // spec 5.4: notes and ideas are left out of the client view.
    const notes = !client && holds(auth.scopes, 'notes:read');
    const ideas = !client && holds(auth.scopes, 'ideas:write');
    // Two reads at a time: a calendar holds at most two of the pool's connections, which every
    // workspace's requests share.
    const [postRows, draftRows] = await Promise.all([
      readPrepared<PostRow>(postsRead(shape, values(0))),
      readPrepared<DraftRow>(draftsRead(shape, values(1))),
    ]);
    const [noteRows, ideaRows] = await Promise.all([
      notes ? readPrepared<NoteRow>(notesRead('notes', values(2))) : [],
      ideas ? readPrepared<IdeaRow>(ideasRead(ids.length, { workspaceId: auth.workspaceId, ids, ...ideasAfter, to, rows: limit + 1 })) : [],
    ]);

    const placed: Placed[] = [];
    // A timed row at its project's local day and time (each read keeps to its project's range).
    const place = (r: TimedRow): { day: number; at: number; wall: number } => {
      const wall = wallClockMs(r.at, byId.get(r.project_id)!.timezone);
      return { day: Math.floor(wall / DAY_MS), at: r.at, wall };
    };
    for (const row of postRows) {
      const t = place(row);
      placed.push({ day: t.day, at: t.at, order: 0, wall: t.wall, row });
    }
    for (const row of draftRows) {
      const t = place(row);
      placed.push({ day: t.day, at: t.at, order: 1, wall: t.wall, row });
    }
    for (const row of noteRows) {
      const t = place(row);
      placed.push({ day: t.day, at: t.at, order: 2, wall: t.wall, row });
    }
    for (const row of ideaRows) placed.push({ day: Date.parse(`${row.date}T00:00:00Z`) / DAY_MS, at: Infinity, order: 3, wall: NaN, row });
    placed.sort(byPlace);
    // Every read stops at limit + 1 rows of a project and kind, so more than `limit` placed means
    // more follow, and no more than `limit` means every read was whole.
    const kept = Math.min(placed.length, limit);
    const entries: CalendarEntry[] = new Array(kept);
    for (let i = 0; i < kept; i++) entries[i] = entryOf(placed[i]!);
    body.data.entries = entries;
    if (placed.length > limit) {
      body.data.truncated = true;
      const last = positionOf(placed[kept - 1]!);
      body.data.nextCursor = encodeSortCursor({ value: positionValue(last), id: last.id }, filters);
    }
    return body;
  },
});
