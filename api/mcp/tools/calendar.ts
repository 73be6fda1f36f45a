import { listCalendar } from '../../operations/calendar/calendar';
import { listCompanyPages } from '../../operations/companyPages/companyPages';
import { operationTool, READ } from '../tool';

// spec 4.9 list_calendar (scope "not stated": the operation's own posts:read applies, see
// docs/calendar.md), and list_company_pages, a 9.3 addition twin of GET /v1/company-pages.

export const listCalendarTool = operationTool(listCalendar, {
  name: 'list_calendar',
  title: 'List the calendar',
  description:
    "Calendar of one project (projectId) or of every project you can see (omit projectId), from..to (YYYY-MM-DD, at most 62 days, default the next 7 days) in each project's timezone: scheduled and published posts at their times, drafts holding a slot, notes with their slots, ideas on their dates. Each entry has a type (post, draft, note, idea) and an id. At most limit entries (default and most 5,000), the earliest; when truncated, pass nextCursor as cursor with the same projectId, from and to for the next. Requires posts:read; notes need notes:read, ideas ideas:write.",
  scopes: { allOf: ['posts:read'] },
  annotations: { ...READ, idempotentHint: true },
});

export const listCompanyPagesTool = operationTool(listCompanyPages, {
  name: 'list_company_pages',
  title: 'List company pages',
  description:
    'Company-page projects, each with the personal account it publishes through (linkedAccount) and canPublish. Cursor-paginated.',
  scopes: 'any',
  annotations: { ...READ, idempotentHint: true },
});
