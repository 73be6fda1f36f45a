// docs/calendar.md: the calendar answer (lib/presenters/calendar.ts).

export { calendarSchema, type Calendar } from '../../../lib/presenters/calendar';
