// Wall-clock times in a project's calendar timezone (spec 4.4: an offset-less timestamp
// resolves in the project's calendar timezone), without a date library.

const OFFSET_RE = /(Z|[+-]\d{2}:?\d{2})$/i;

export function hasOffset(iso: string): boolean {
  return OFFSET_RE.test(iso);
}

function tzOffsetMs(utcMs: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
  }).formatToParts(new Date(utcMs));
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return asUtc - Math.floor(utcMs / 1000) * 1000;
}

/**
 * Parses an ISO 8601 date-time; one without an offset is read as wall time in `timeZone`.
 *
 * Around a DST change a wall time can occur twice or not at all. The answer must not depend on
 * which side of UTC the zone lies, so both cases follow one rule (the usual "compatible"
 * choice of calendars): a repeated time is its earlier occurrence, and a skipped time moves
 * forward by the length of the gap (02:30 on a spring-forward night is 03:30), never back
 * before the time asked for.
 */
export function parseInZone(iso: string, timeZone: string): Date {
  if (hasOffset(iso)) return new Date(iso);
  const wall = Date.parse(`${iso}Z`);
  if (Number.isNaN(wall)) return new Date(NaN);
  // The offsets in force a day either side bracket any single transition near `wall`.
  const before = tzOffsetMs(wall - 86_400_000, timeZone);
  const after = tzOffsetMs(wall + 86_400_000, timeZone);
  const candidates = [wall - before, wall - after].filter((utc) => utc + tzOffsetMs(utc, timeZone) === wall);
  if (candidates.length) return new Date(Math.min(...candidates));
  // No instant shows this wall time: it fell in the gap; read it with the offset before the gap.
  return new Date(wall - before);
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
