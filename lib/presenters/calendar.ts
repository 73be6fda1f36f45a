import { z } from 'zod';
import { dateTime, objectComponent } from './output';

// GET /v1/calendar (docs/calendar.md): the entries of the projects' calendars in a date range.

const calendarDate = z.string().describe("YYYY-MM-DD, in the project's timezone");
const calendarTimed = {
  id: z.string(),
  projectId: z.string(),
  at: dateTime,
  date: calendarDate,
  time: z.string().describe("HH:MM, in the project's timezone"),
};

export const calendarSchema = objectComponent('Calendar', {
  from: calendarDate,
  to: calendarDate,
  maxDays: z.number().int(),
  projects: z.array(z.object({ id: z.string(), name: z.string(), type: z.string(), timezone: z.string() }).strict()),
  entries: z.array(
    z.discriminatedUnion('type', [
      z.object({ type: z.literal('post'), ...calendarTimed, status: z.string(), title: z.string(), contentType: z.string() }).strict(),
      z
        .object({
          type: z.literal('draft'),
          ...calendarTimed,
          status: z.string(),
          title: z.string(),
          contentType: z.string(),
          slotId: z.string(),
        })
        .strict(),
      z.object({ type: z.literal('note'), ...calendarTimed, contentType: z.string(), content: z.string(), slotId: z.string() }).strict(),
      z
        .object({
          type: z.literal('idea'),
          id: z.string(),
          projectId: z.string(),
          date: calendarDate,
          title: z.string(),
          status: z.string(),
        })
        .strict(),
    ]),
  ),
  truncated: z.boolean().describe('more entries follow than this answer holds (`limit`, at most 5,000): nextCursor reads them'),
  nextCursor: z.string().nullable().describe('the cursor of the next entries of the same range (`cursor`), null after the last'),
});

export type Calendar = z.infer<typeof calendarSchema>;
