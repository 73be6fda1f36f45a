import type { SeededWorkspace } from './seed';

// Every read surface of the API (issue 36, "Reads at a million posts"), as requests against a
// workspace of the SQL seed (./seed.ts): the reads bench measures each at two sizes, and
// test/bench/readPlans.test.ts asserts the plans of the list reads among them.

export interface ReadSurface {
  surface: string;
  path: string;
  headers: Record<string, string>;
  /**
   * For a list read: the table whose rows it pages, and the index it must read them through where
   * scoping alone does not make a plan sound (test/bench/readPlans.test.ts asserts how).
   */
  list?: { table: string; index?: string };
}

export function readSurfaces(w: SeededWorkspace, now = Date.now()): ReadSurface[] {
  const key = { authorization: `Bearer ${w.key}` };
  const p = w.projectId;
  const day = (n: number) => new Date(now + n * 86_400_000).toISOString().slice(0, 10);
  const read = (surface: string, path: string, table?: string, headers = key, index?: string) => ({
    surface,
    path,
    headers,
    list: table ? { table, index } : undefined,
  });
  // The calendar month ahead (where the scheduled posts are) and the last 30 days of analytics.
  return [
    read('post list', `/v1/posts?projectId=${p}`, 'posts'),
    read('post list, scheduled', `/v1/posts?projectId=${p}&status=scheduled`, 'posts'),
    read('post list, drafts and failed', `/v1/posts?projectId=${p}&status=draft,failed_to_publish`, 'posts'),
    read('post list, a month', `/v1/posts?projectId=${p}&dateFrom=${day(-90)}&dateTo=${day(-60)}`, 'posts'),
    read('post list, a year ago', `/v1/posts?projectId=${p}&dateTo=${day(-365)}`, 'posts'),
    read('calendar month', `/v1/calendar?projectId=${p}&from=${day(0)}&to=${day(30)}`, 'posts', key, 'posts_calendar_entries'),
    read(
      'calendar month, a page of 100',
      `/v1/calendar?projectId=${p}&from=${day(0)}&to=${day(30)}&limit=100`,
      'posts',
      key,
      'posts_calendar_entries',
    ),
    read('analytics overview', `/v1/analytics/overview?projectId=${p}&from=${day(-29)}&to=${day(0)}`),
    read('analytics per post', `/v1/analytics/posts?projectId=${p}`, 'posts'),
    read('media list', '/v1/media', 'media_assets'),
    read('knowledge search', '/v1/knowledge?query=pricing%20customers', 'knowledge_chunks', key, 'knowledge_chunks_search'),
    read('idea board', `/v1/ideas?projectId=${p}`, 'ideas'),
    read('jobs list', '/v1/jobs', 'jobs'),
    read('webhook deliveries', `/v1/webhook-endpoints/${w.endpointId}/deliveries`, 'webhook_deliveries', {
      authorization: `Bearer ${w.adminToken}`,
    }),
    read('usage', '/v1/usage'),
  ];
}
