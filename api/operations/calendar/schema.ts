import { isoDate } from '../../validation';
import { z } from 'zod';
import { paginationInput } from '../../pagination';
// docs/calendar.md: the calendar answer (lib/presenters/calendar.ts).

export { calendarSchema, type Calendar } from '../../../lib/presenters/calendar';

export const listCalendarInput = z
  .object({
    projectId: z.string().min(1).max(100).optional(),
    from: isoDate.optional(),
    to: isoDate.optional(),
    ...paginationInput,
  })
  .strict();
