import type { SeededWorkspace } from './seed';

// Every read surface of the API (issue 36, "Reads at a million posts"), as requests against a
// workspace of the SQL seed (./seed.ts): the reads bench measures each at two sizes, and
// test/bench/readPlans.test.ts asserts the plans of the list reads among them.

export interface ReadSurface {
  surface: string;
  path: string;
  headers: Record<string, string>;
  /** For a list read: the table whose rows it pages (test/bench/readPlans.test.ts asserts how). */
  list?: { table: string };
}

const DAY_MS = 86_400_000;
const ymd = (t: number) => new Date(t).toISOString().slice(0, 10);

export function readSurfaces(w: SeededWorkspace, now = Date.now()): ReadSurface[] {
  const key = { authorization: `Bearer ${w.key}` };
  const admin = { authorization: `Bearer ${w.adminToken}` };
  const p = w.projectId;
  // The calendar month ahead (where the scheduled posts are) and the last 30 days of analytics.
  const monthFrom = ymd(now);
  const monthTo = ymd(now + 30 * DAY_MS);
  const from = ymd(now - 29 * DAY_MS);
  const to = ymd(now);
  const posts = { table: 'posts' };
  return [
    { surface: 'post list', path: `/v1/posts?projectId=${p}`, headers: key, list: posts },
    { surface: 'post list, scheduled', path: `/v1/posts?projectId=${p}&status=scheduled`, headers: key, list: posts },
    { surface: 'post list, drafts and failed', path: `/v1/posts?projectId=${p}&status=draft,failed_to_publish`, headers: key, list: posts },
    {
      surface: 'post list, a month',
      path: `/v1/posts?projectId=${p}&dateFrom=${ymd(now - 90 * DAY_MS)}&dateTo=${ymd(now - 60 * DAY_MS)}`,
      headers: key,
      list: posts,
    },
    { surface: 'post list, a year ago', path: `/v1/posts?projectId=${p}&dateTo=${ymd(now - 365 * DAY_MS)}`, headers: key, list: posts },
    { surface: 'calendar month', path: `/v1/calendar?projectId=${p}&from=${monthFrom}&to=${monthTo}`, headers: key, list: posts },
    { surface: 'analytics overview', path: `/v1/analytics/overview?projectId=${p}&from=${from}&to=${to}`, headers: key },
    { surface: 'analytics per post', path: `/v1/analytics/posts?projectId=${p}`, headers: key, list: posts },
    { surface: 'media list', path: '/v1/media', headers: key, list: { table: 'media_assets' } },
    {
      surface: 'knowledge search',
      path: '/v1/knowledge?query=pricing%20customers',
      headers: key,
      list: { table: 'knowledge_chunks' },
    },
    { surface: 'idea board', path: `/v1/ideas?projectId=${p}`, headers: key, list: { table: 'ideas' } },
    { surface: 'jobs list', path: '/v1/jobs', headers: key, list: { table: 'jobs' } },
    {
      surface: 'webhook deliveries',
      path: `/v1/webhook-endpoints/${w.endpointId}/deliveries`,
      headers: admin,
      list: { table: 'webhook_deliveries' },
    },
    { surface: 'usage', path: '/v1/usage', headers: key },
  ];
}
