import pg from 'pg';
import { postContent, prng, titleOf } from '../harness/content';
import { setTimeout as sleep } from 'node:timers/promises';
import { step } from '../harness/format';
import { DATABASE_URL, BENCH_DB, opt } from '../posts-list';

// The posts-list bench's data: one run per database at a time, and the seeded project.

/**
 * One posts-list run per database at a time (a second one waits): a Postgres advisory lock held
 * by a session on the maintenance database for the life of this process.
 */
export async function holdRunLock(): Promise<() => Promise<void>> {
  const admin = new URL(DATABASE_URL);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  client.on('error', () => undefined);
  await client.connect();
  const key = `content-scheduler bench ${BENCH_DB}`;
  let announced = false;
  for (;;) {
    const { rows } = await client.query<{ ok: boolean }>('select pg_try_advisory_lock(hashtext($1)) as ok', [key]);
    if (rows[0]?.ok) break;
    if (!announced) step(`another run is using ${BENCH_DB}; waiting for it to finish`);
    announced = true;
    await sleep(5000);
  }
  // The session is the lock: it stays open until the run is over.
  return () => client.end().catch(() => undefined);
}

/** The benchmarked workspace (admin/provision) and its --posts posts, written in bulk. */
export async function seed() {
  const { benchWorkspace } = await import('../harness/seed');
  const { db, closeDb } = await import('../../lib/db');
  const { closeRedis } = await import('../../lib/redis');
  const { newId } = await import('../../lib/ids');

  const { workspace, project, key } = await benchWorkspace({
    name: 'Bench Co',
    project: { name: 'Bench Person', username: 'bench-person', connection: 'connected' },
    scopes: ['read'],
    keyName: 'bench',
  });

  const statuses = await db()('post_statuses').where({ workspace_id: workspace.id }).select('id', 'category');
  const statusId = (category: string) => statuses.find((s: { category: string }) => s.category === category)?.id ?? null;
  // A plausible board: mostly drafts and published posts, some scheduled, a few in review.
  const MIX: Array<[string, string, number]> = [
    ['draft', 'draft', 0.4],
    ['published', 'published', 0.25],
    ['scheduled', 'scheduled', 0.15],
    ['suggested', 'suggested', 0.1],
    ['waitingApproval', 'review', 0.06],
    ['failed_to_publish', 'scheduled', 0.04],
  ];
  const CONTENT_TYPES = ['PERSONAL', 'PERSONAL', 'PERSONAL', 'BUSINESS_EXTERNAL', 'EDUCATIONAL'];
  const rand = prng(20261121);
  const now = Date.now();
  const year = 365 * 86_400_000;
  // A small share of soft-deleted rows, so `deleted_at is null` filters something out as it
  // does in production.
  const deleted = Math.round(opt.posts * 0.02);
  const rows: Record<string, unknown>[] = [];
  const lengths: number[] = [];
  for (let i = 0; i < opt.posts + deleted; i++) {
    let u = rand(),
      acc = 0;
    const [status, category] = (MIX.find(([, , p]) => (acc += p) >= u) ?? MIX[0]!).slice(0, 2) as [string, string];
    const createdAt = new Date(now - Math.floor(rand() * 2 * year));
    const content = postContent(rand);
    lengths.push(content.length);
    u = rand();
    rows.push({
      id: newId('post'),
      workspace_id: workspace.id,
      project_id: project.id,
      status,
      status_id: statusId(category),
      title: u < 0.7 ? titleOf(content) : '',
      title_auto: u < 0.7,
      content,
      content_type: CONTENT_TYPES[Math.floor(rand() * CONTENT_TYPES.length)],
      scheduled_at:
        status === 'scheduled' || status === 'failed_to_publish'
          ? new Date(now + Math.floor(rand() * 60 * 86_400_000))
          : status === 'published'
            ? new Date(createdAt.getTime() + 86_400_000)
            : null,
      published_at: status === 'published' ? new Date(createdAt.getTime() + 86_400_000) : null,
      created_at: createdAt,
      updated_at: rand() < 0.6 ? new Date(createdAt.getTime() + Math.floor(rand() * 7 * 86_400_000)) : null,
      deleted_at: i >= opt.posts ? new Date(now - Math.floor(rand() * 30 * 86_400_000)) : null,
    });
  }
  for (let i = 0; i < rows.length; i += 1000) await db()('posts').insert(rows.slice(i, i + 1000));
  // Fresh statistics and visibility map, as a table this size has in production.
  await db().raw('vacuum analyze posts');
  await closeDb();
  await closeRedis();
  return {
    workspaceId: workspace.id,
    projectId: project.id,
    apiKey: key,
    posts: opt.posts,
    deletedPosts: deleted,
    contentChars: {
      min: Math.min(...lengths),
      max: Math.max(...lengths),
      mean: Math.round(lengths.reduce((a, b) => a + b, 0) / lengths.length),
    },
  };
}
