// Kept Intl formatters of a zone's wall time. Pure (no Node, no clock), so workflow code may use
// it through lib/temporal/details.

const formats = new Map<string, Intl.DateTimeFormat>();

/**
 * The zone's date and 24-hour time to the second (`en-CA` parts), with its offset
 * (`GMT+01:00`) when `withOffset`. One formatter per zone and variant, kept: building an
 * Intl.DateTimeFormat costs far more than formatting with one. Throws a RangeError for a zone
 * this runtime's ICU does not know.
 */
export function zoneFormat(timeZone: string, withOffset = false): Intl.DateTimeFormat {
  const key = `${timeZone}|${withOffset}`;
  let f = formats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      ...(withOffset ? { timeZoneName: 'longOffset' } : {}),
    });
    formats.set(key, f);
  }
  return f;
}
