import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Temporal } from 'temporal-polyfill';
import { dayStartUtc, hasOffset, isValidTimeZone, localDateTime, nextWeekdayAt, parseInZone, weekStartUtc } from '../../lib/time';

// spec 4.4: offset-less timestamps are wall time in the project's timezone; spec 8: the
// weekly budget week starts Monday 00:00 UTC.

const iso = (s: string, tz: string) => parseInZone(s, tz).toISOString();

describe('lib/time', () => {
  describe('parseInZone', () => {
    it('honours an explicit offset whatever the zone', () => {
      assert.equal(iso('2026-03-08T01:30:00Z', 'America/New_York'), '2026-03-08T01:30:00.000Z');
      assert.equal(iso('2026-03-08T01:30:00+02:00', 'America/New_York'), '2026-03-07T23:30:00.000Z');
      assert.equal(iso('2026-03-08T01:30:00-0330', 'UTC'), '2026-03-08T05:00:00.000Z');
    });

    it('reads wall time on both sides of the spring-forward change (New York, 2026-03-08)', () => {
      assert.equal(iso('2026-03-07T09:00:00', 'America/New_York'), '2026-03-07T14:00:00.000Z');
      assert.equal(iso('2026-03-08T01:59:00', 'America/New_York'), '2026-03-08T06:59:00.000Z');
      assert.equal(iso('2026-03-08T03:00:00', 'America/New_York'), '2026-03-08T07:00:00.000Z');
      assert.equal(iso('2026-03-08T09:00:00', 'America/New_York'), '2026-03-08T13:00:00.000Z');
      assert.equal(iso('2026-03-09T09:00:00', 'America/New_York'), '2026-03-09T13:00:00.000Z');
    });

    it('reads wall time on both sides of the fall-back change (New York, 2026-11-01)', () => {
      assert.equal(iso('2026-10-31T09:00:00', 'America/New_York'), '2026-10-31T13:00:00.000Z');
      assert.equal(iso('2026-11-01T00:30:00', 'America/New_York'), '2026-11-01T04:30:00.000Z');
      assert.equal(iso('2026-11-01T02:30:00', 'America/New_York'), '2026-11-01T07:30:00.000Z');
      assert.equal(iso('2026-11-01T09:00:00', 'America/New_York'), '2026-11-01T14:00:00.000Z');
    });

    it('moves a wall time skipped by spring-forward ahead by the gap, east or west of UTC', () => {
      // 02:30 does not exist in New York on 2026-03-08; it reads as 03:30 EDT.
      assert.equal(iso('2026-03-08T02:30:00', 'America/New_York'), '2026-03-08T07:30:00.000Z');
      // 01:30 does not exist in London on 2026-03-29; it reads as 02:30 BST.
      assert.equal(iso('2026-03-29T01:30:00', 'Europe/London'), '2026-03-29T01:30:00.000Z');
      // 02:30 does not exist in Sydney on 2026-10-04; it reads as 03:30 AEDT.
      assert.equal(iso('2026-10-04T02:30:00', 'Australia/Sydney'), '2026-10-03T16:30:00.000Z');
    });

    it('reads a wall time repeated by fall-back as its first occurrence, east or west of UTC', () => {
      assert.equal(iso('2026-11-01T01:30:00', 'America/New_York'), '2026-11-01T05:30:00.000Z'); // 01:30 EDT
      assert.equal(iso('2026-10-25T01:30:00', 'Europe/London'), '2026-10-25T00:30:00.000Z'); // 01:30 BST
      assert.equal(iso('2026-04-05T02:30:00', 'Australia/Sydney'), '2026-04-04T15:30:00.000Z'); // 02:30 AEDT
    });

    it('handles fractional offsets, seconds, milliseconds and minute precision', () => {
      assert.equal(iso('2026-06-01T12:00:00.250', 'Asia/Kolkata'), '2026-06-01T06:30:00.250Z');
      assert.equal(iso('2026-06-01T12:00', 'Asia/Kathmandu'), '2026-06-01T06:15:00.000Z');
      assert.equal(iso('2026-06-01T12:00:00', 'UTC'), '2026-06-01T12:00:00.000Z');
      assert.equal(iso('2026-01-01T00:00:00', 'Pacific/Kiritimati'), '2025-12-31T10:00:00.000Z');
    });

    it('round-trips every hour of a DST day through the zone’s own formatting (localDateTime)', () => {
      // 01:15 UTC on the spring-forward day is 03:15 CEST: the formatting itself, pinned.
      assert.deepEqual(localDateTime(new Date('2026-03-29T01:15:00Z'), 'Europe/Berlin'), { date: '2026-03-29', time: '03:15' });
      for (let h = 0; h < 24; h++) {
        if (h === 2) continue; // skipped on 2026-03-29 in Berlin
        const wall = `2026-03-29T${String(h).padStart(2, '0')}:15`;
        const { date, time } = localDateTime(parseInZone(wall, 'Europe/Berlin'), 'Europe/Berlin');
        assert.equal(`${date}T${time}`, wall);
      }
    });

    it('places any instant where the zone’s own formatter does, across offset changes of every kind (localDateTime)', () => {
      // Zones with DST both ways, half- and quarter-hour offsets, a 30-minute DST (Lord Howe), a
      // two-hour one (Troll), DST suspended for Ramadan (Casablanca), and an offset in seconds
      // before 1900 (Amsterdam's local mean time).
      const zones = [
        'UTC',
        'Europe/Berlin',
        'America/New_York',
        'Australia/Lord_Howe',
        'Pacific/Chatham',
        'America/St_Johns',
        'Asia/Kathmandu',
        'America/Santiago',
        'Africa/Casablanca',
        'Antarctica/Troll',
        'Asia/Tehran',
        'Europe/Amsterdam',
      ];
      // The oracle: Temporal's zone arithmetic (the polyfill the service parses wall times with).
      const two = (n: number) => String(n).padStart(2, '0');
      const reference = (at: Date, timeZone: string) => {
        const z = Temporal.Instant.fromEpochMilliseconds(at.getTime()).toZonedDateTimeISO(timeZone);
        return { date: `${z.year}-${two(z.month)}-${two(z.day)}`, time: `${two(z.hour)}:${two(z.minute)}` };
      };
      const instants = fc.integer({ min: Date.UTC(1890, 0, 1), max: Date.UTC(2100, 0, 1) }).map((ms) => new Date(ms));
      fc.assert(
        fc.property(instants, fc.constantFrom(...zones), (at, zone) => {
          assert.deepEqual(localDateTime(at, zone), reference(at, zone), `${at.toISOString()} in ${zone}`);
        }),
        { numRuns: 20_000 },
      );
      // Every minute around this year's changes in two zones, where a wrong span would show.
      for (const [zone, around] of [
        ['Europe/Berlin', '2026-03-29T01:00:00Z'],
        ['Europe/Berlin', '2026-10-25T01:00:00Z'],
        ['Australia/Lord_Howe', '2026-04-04T15:00:00Z'],
        ['Australia/Lord_Howe', '2026-10-03T15:30:00Z'],
      ] as const) {
        for (let m = -180; m <= 180; m++) {
          const at = new Date(Date.parse(around) + m * 60_000);
          assert.deepEqual(localDateTime(at, zone), reference(at, zone), `${at.toISOString()} in ${zone}`);
        }
      }
    });

    it('returns an invalid date for unparseable input', () => {
      assert.ok(Number.isNaN(parseInZone('not a date', 'UTC').getTime()));
    });

    it('treats the exact edges of a DST change like the times inside them', () => {
      // Spring forward, New York: 02:00 and 02:59:59 are skipped and move ahead by the hour.
      assert.equal(iso('2026-03-08T02:00:00', 'America/New_York'), '2026-03-08T07:00:00.000Z');
      assert.equal(iso('2026-03-08T02:59:59', 'America/New_York'), '2026-03-08T07:59:59.000Z');
      // Fall back, New York: 01:00 through 01:59:59 happen twice (EDT first); 02:00 once, in EST.
      assert.equal(iso('2026-11-01T01:00:00', 'America/New_York'), '2026-11-01T05:00:00.000Z');
      assert.equal(iso('2026-11-01T01:59:59', 'America/New_York'), '2026-11-01T05:59:59.000Z');
      assert.equal(iso('2026-11-01T02:00:00', 'America/New_York'), '2026-11-01T07:00:00.000Z');
      // Berlin: 02:00 on 2026-03-29 is skipped (03:00 CEST); 02:30 on 2026-10-25 repeats (CEST first).
      assert.equal(iso('2026-03-29T02:00:00', 'Europe/Berlin'), '2026-03-29T01:00:00.000Z');
      assert.equal(iso('2026-10-25T02:30:00', 'Europe/Berlin'), '2026-10-25T00:30:00.000Z');
      assert.equal(iso('2026-10-25T03:00:00', 'Europe/Berlin'), '2026-10-25T02:00:00.000Z');
    });

    it('handles half-hour DST shifts and a skipped calendar day', () => {
      // Lord Howe Island shifts by 30 minutes: 02:15 on 2026-10-04 is skipped (+10:30 to +11).
      assert.equal(iso('2026-10-04T02:15:00', 'Australia/Lord_Howe'), '2026-10-03T15:45:00.000Z');
      // 01:45 on 2026-04-05 repeats; the first occurrence is still at +11.
      assert.equal(iso('2026-04-05T01:45:00', 'Australia/Lord_Howe'), '2026-04-04T14:45:00.000Z');
      // Samoa skipped 2011-12-30 entirely (-10 to +14): noon that day moves ahead by the 24-hour gap.
      assert.equal(iso('2011-12-30T12:00:00', 'Pacific/Apia'), '2011-12-30T22:00:00.000Z');
      assert.equal(iso('2011-12-31T12:00:00', 'Pacific/Apia'), '2011-12-30T22:00:00.000Z');
    });

    it('refuses impossible calendar dates rather than rolling them over, and unknown zones', () => {
      assert.ok(Number.isNaN(parseInZone('2026-02-30T10:00:00', 'UTC').getTime()));
      assert.ok(Number.isNaN(parseInZone('2026-04-31T10:00:00', 'Europe/Berlin').getTime()));
      assert.throws(() => parseInZone('2026-01-01T00:00:00', 'Mars/Olympus'), RangeError);
    });
  });

  it('tells offsets apart', () => {
    assert.equal(hasOffset('2026-01-01T00:00:00Z'), true);
    assert.equal(hasOffset('2026-01-01T00:00:00z'), true);
    assert.equal(hasOffset('2026-01-01T00:00:00+05:30'), true);
    assert.equal(hasOffset('2026-01-01T00:00:00-0800'), true);
    assert.equal(hasOffset('2026-01-01T00:00:00'), false);
    assert.equal(hasOffset('2026-01-01T10:30'), false);
  });

  it('validates zone names', () => {
    assert.equal(isValidTimeZone('America/New_York'), true);
    assert.equal(isValidTimeZone('Mars/Olympus'), false);
  });

  describe('weekStartUtc', () => {
    it('is Monday 00:00 UTC of the week', () => {
      assert.equal(weekStartUtc(new Date('2026-03-04T15:00:00Z')).toISOString(), '2026-03-02T00:00:00.000Z'); // Wednesday
      assert.equal(weekStartUtc(new Date('2026-03-02T00:00:00Z')).toISOString(), '2026-03-02T00:00:00.000Z'); // Monday at the start
      assert.equal(weekStartUtc(new Date('2026-03-08T23:59:59.999Z')).toISOString(), '2026-03-02T00:00:00.000Z'); // Sunday at the end
      assert.equal(weekStartUtc(new Date('2026-03-09T00:00:00Z')).toISOString(), '2026-03-09T00:00:00.000Z');
    });

    it('crosses month and year ends', () => {
      assert.equal(weekStartUtc(new Date('2026-01-01T12:00:00Z')).toISOString(), '2025-12-29T00:00:00.000Z');
      assert.equal(weekStartUtc(new Date('2026-04-01T12:00:00Z')).toISOString(), '2026-03-30T00:00:00.000Z');
    });

    it('uses UTC, not the local offset of the instant', () => {
      // Monday 01:00 in Berlin is still Sunday in UTC.
      assert.equal(weekStartUtc(parseInZone('2026-03-09T00:30:00', 'Europe/Berlin')).toISOString(), '2026-03-02T00:00:00.000Z');
    });
  });

  describe('nextWeekdayAt (spec 2.8 queue slots)', () => {
    const next = (utc: string, tz: string) => nextWeekdayAt(new Date(utc), tz, 9).toISOString();

    it('is the same day when its 09:00 is still ahead, else the next weekday, strictly after', () => {
      // Monday 2026-03-09 in New York (EDT since the day before).
      assert.equal(next('2026-03-09T12:00:00Z', 'America/New_York'), '2026-03-09T13:00:00.000Z'); // 08:00 → 09:00
      assert.equal(next('2026-03-09T13:00:00Z', 'America/New_York'), '2026-03-10T13:00:00.000Z'); // 09:00 → Tuesday
    });

    it('skips the weekend, across a DST change', () => {
      // Friday 10:00 EST → Monday 09:00 EDT (spring forward on Sunday 2026-03-08).
      assert.equal(next('2026-03-06T15:00:00Z', 'America/New_York'), '2026-03-09T13:00:00.000Z');
      assert.equal(next('2026-03-07T12:00:00Z', 'Europe/Berlin'), '2026-03-09T08:00:00.000Z'); // Saturday → Monday 09:00 CET
    });

    it('never skips a weekday that is only 23 hours long', () => {
      // Cairo starts DST at midnight on Friday 2026-04-24: Thursday 23:30 EET is followed by
      // Friday 09:00 EEST, which a 24-hour step from Thursday 23:30 (Saturday 00:30) would miss.
      assert.equal(next('2026-04-23T21:30:00Z', 'Africa/Cairo'), '2026-04-24T06:00:00.000Z');
    });
  });

  it('dayStartUtc is midnight UTC', () => {
    assert.equal(dayStartUtc(new Date('2026-03-04T23:59:59Z')).toISOString(), '2026-03-04T00:00:00.000Z');
  });
});
