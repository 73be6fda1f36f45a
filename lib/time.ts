import { Temporal } from 'temporal-polyfill';
import { zoneFormat } from './zoneFormat';

// Wall-clock times in a project's calendar timezone (spec 4.4: an offset-less timestamp
// resolves in the project's calendar timezone). The zone arithmetic is Temporal's (the
// polyfill of the TC39 API), reading the IANA database through Intl.

const OFFSET_RE = /(Z|[+-]\d{2}:?\d{2})$/i;

export function hasOffset(iso: string): boolean {
  return OFFSET_RE.test(iso);
}

/**
 * Parses an ISO 8601 date-time; one without an offset is read as wall time in `timeZone`.
 *
 * Around a DST change a wall time can occur twice or not at all. The answer must not depend on
 * which side of UTC the zone lies, so both cases follow one rule, Temporal's "compatible"
 * disambiguation (that of calendars): a repeated time is its earlier occurrence, and a skipped
 * time moves forward by the length of the gap (02:30 on a spring-forward night is 03:30), never
 * back before the time asked for. An unknown zone throws a RangeError.
 */
export function parseInZone(iso: string, timeZone: string): Date {
  if (hasOffset(iso)) return new Date(iso);
  let wall: Temporal.PlainDateTime;
  try {
    wall = Temporal.PlainDateTime.from(iso, { overflow: 'reject' });
  } catch {
    return new Date(NaN);
  }
  return new Date(wall.toZonedDateTime(timeZone, { disambiguation: 'compatible' }).epochMilliseconds);
}

/**
 * The first weekday (Monday to Friday) `hour`:00 in `timeZone` strictly after `after` (spec 2.8:
 * a note without a slot date is queued on the next free weekday 09:00). The walk is over
 * calendar dates, not 24-hour steps, so a 23- or 25-hour DST day neither skips nor repeats a
 * date; a 09:00 that a DST change skips reads as Temporal's "compatible" instant.
 */
export function nextWeekdayAt(after: Date, timeZone: string, hour: number): Date {
  const start = Temporal.Instant.fromEpochMilliseconds(after.getTime()).toZonedDateTimeISO(timeZone).toPlainDate();
  for (let i = 0; ; i++) {
    const date = start.add({ days: i });
    if (date.dayOfWeek >= 6) continue;
    const at = date.toZonedDateTime({ timeZone, plainTime: new Temporal.PlainTime(hour) }).epochMilliseconds;
    if (at > after.getTime()) return new Date(at);
  }
}

/** The zone's UTC offset at an instant, in ms: its wall time read as UTC, less the instant (to the second). */
function offsetAt(ms: number, timeZone: string): number {
  const wall: Record<string, number> = {};
  for (const p of zoneFormat(timeZone).formatToParts(ms)) if (p.type !== 'literal') wall[p.type] = Number(p.value);
  const asUtc = Date.UTC(wall.year!, wall.month! - 1, wall.day!, wall.hour!, wall.minute!, wall.second!);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/**
 * Zone offsets by six-hour span of UTC, or NaN for a span holding an offset change. Zones change
 * offset at most twice a year and never twice within six hours, so a span whose first and last
 * millisecond share an offset has it throughout, and a calendar week costs its zone about 29
 * formatter calls instead of one per entry. Kept per zone, each by span number.
 */
const SPAN_MS = 6 * 3_600_000;
const spanOffsets = new Map<string, Map<number, number>>();

function offsetInSpan(ms: number, timeZone: string): number {
  const span = Math.floor(ms / SPAN_MS);
  let zone = spanOffsets.get(timeZone);
  if (zone === undefined) spanOffsets.set(timeZone, (zone = new Map()));
  let offset = zone.get(span);
  if (offset === undefined) {
    const first = offsetAt(span * SPAN_MS, timeZone);
    offset = first === offsetAt((span + 1) * SPAN_MS - 1, timeZone) ? first : NaN;
    if (zone.size >= 50_000) zone.clear();
    zone.set(span, offset);
  }
  return Number.isNaN(offset) ? offsetAt(ms, timeZone) : offset;
}

const two = (n: number) => (n < 10 ? `0${n}` : String(n));

/** An instant (epoch ms) as the wall-clock time of `timeZone` then, in epoch ms read in UTC: moved by the zone's offset (offsetInSpan). */
export function wallClockMs(ms: number, timeZone: string): number {
  return ms + offsetInSpan(ms, timeZone);
}

/** A wall-clock time (wallClockMs) as its calendar day (`YYYY-MM-DD`) and time (`HH:MM`, 24-hour). */
export function wallDateTime(wallMs: number): { date: string; time: string } {
  const wall = new Date(wallMs);
  return {
    date: `${wall.getUTCFullYear()}-${two(wall.getUTCMonth() + 1)}-${two(wall.getUTCDate())}`,
    time: `${two(wall.getUTCHours())}:${two(wall.getUTCMinutes())}`,
  };
}

/**
 * An instant's calendar day and wall-clock time in `timeZone` (wallClockMs, wallDateTime). The
 * calendar places every entry of its range this way (bench/README.md "Read surfaces": a
 * formatter built per entry held a week of 390 posts to 0.05× its statements bare, a kept one
 * formatting each entry spent a fifth of the request).
 */
export function localDateTime(at: Date, timeZone: string): { date: string; time: string } {
  return wallDateTime(wallClockMs(at.getTime(), timeZone));
}

export function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Monday 00:00 UTC of the week holding `d` (spec 8: the weekly AI budget resets then). */
export function weekStartUtc(d: Date): Date {
  const day = (d.getUTCDay() + 6) % 7;
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - day));
}

export function dayStartUtc(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
}
