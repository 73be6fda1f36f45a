import http from 'node:http';
import Koa from 'koa';
import pg from 'pg';
import { serveUnderParent } from './serverChild';

// The posts-list bench's bare server (bench/README.md, "posts-list"): the same page with nothing
// but Koa and the pg driver. BENCH_BARE_ADD adds one piece of the real request path (--ablation:
// ratelimit, project, knex, handler); app modules are imported only for the pieces asked for.

const workspaceId = process.env.BENCH_WORKSPACE_ID;
if (!workspaceId) throw new Error('BENCH_WORKSPACE_ID is not set');
const add = new Set((process.env.BENCH_BARE_ADD ?? '').split(',').flatMap((s) => s.trim() || []));
for (const a of add) if (!['ratelimit', 'project', 'knex', 'handler'].includes(a)) throw new Error(`BENCH_BARE_ADD: unknown piece "${a}"`);

// Same pool size as lib/db's knex pool (max 10).
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
pool.on('error', () => undefined);

const SQL = `select id, project_id, status, content_type, title, content, scheduled_at, created_at, updated_at
  from posts where workspace_id = $1 and project_id = $2 and deleted_at is null
  order by created_at desc, id desc limit $3`;

type Row = Record<'id' | 'project_id' | 'status' | 'content_type' | 'title' | 'content', string> &
  Record<'scheduled_at' | 'updated_at', Date | null> & { created_at: Date };

const consume = add.has('ratelimit') ? (await import('../../api/rateLimit')).consume : null;
const appDb = add.has('knex') || add.has('project') || add.has('handler') ? await import('../../lib/db') : null;
// The operations' models run on objection's bound knex: db() builds the pool and binds it.
appDb?.db();
// Only workspaceId and projectIds matter to the scoping helpers; an API key is an admin.
const adminAuth = { workspaceId, projectIds: null, role: 'admin' } as const;

/** The project lookup as the exact SQL knex generates for findProject, sent through pg. */
const projectSql = new Map<string, { sql: string; bindings: readonly unknown[] }>();
async function projectLookup(projectId: string): Promise<void> {
  if (!projectSql.has(projectId)) {
    const { projectQuery } = await import('../../api/operations/projects/queries');
    const q = projectQuery(adminAuth as never, appDb!.db())
      .where('projects.id', projectId)
      .first()
      .toKnexQuery();
    projectSql.set(projectId, q.toSQL().toNative());
  }
  const q = projectSql.get(projectId)!;
  if (!(await pool.query(q.sql, [...q.bindings])).rows[0]) throw new Error('project not found');
}

/** The page through the service's own builder (postsPageQuery), run by knex. */
async function postsViaKnex(projectId: string, limit: number): Promise<Row[]> {
  const { postsPageQuery } = await import('../../api/operations/posts/posts');
  const values: Record<string, string> = { workspaceId: adminAuth.workspaceId, projectId };
  const shape = { role: 'admin', projects: null, statuses: null, dateFrom: false, dateTo: false, cursor: false, limit } as const;
  return (await postsPageQuery(shape, (name) => values[name]!)) as Row[];
}

const handler = add.has('handler')
  ? await (async () => {
      const { listPosts } = await import('../../api/operations/posts/posts');
      const { parseInput } = await import('../../api/validation');
      const principal = { type: 'api_key', id: 'key_bench', scopes: ['posts:read'] };
      const auth = { ...adminAuth, principal, gatingPlan: 'BUSINESS', scopes: new Set(['posts:read']), reach: 'member' };
      const ctx = { auth: auth as never, requestId: 'req_bench', apiVersion: '2026-08-10' as const };
      return (query: Record<string, unknown>) => listPosts.handler(ctx, parseInput(listPosts.input, query, 'query'));
    })()
  : null;

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method !== 'GET' || ctx.path !== '/v1/posts') return void (ctx.status = 404);
  if (consume) await consume('read', workspaceId);
  if (handler) return void (ctx.body = await handler({ ...ctx.query }));
  const projectId = String(ctx.query.projectId ?? '');
  const limit = Math.min(200, Math.max(1, Number.parseInt(String(ctx.query.limit ?? '50'), 10) || 50));
  if (add.has('project')) await projectLookup(projectId);
  const rows = add.has('knex')
    ? await postsViaKnex(projectId, limit)
    : (await pool.query<Row>(SQL, [workspaceId, projectId, limit + 1])).rows;
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  // Field for field what lib/presenters/posts' presentPostSummary returns; the cursor unsigned and not bound to filters.
  const data = page.map((p) => ({
    id: p.id,
    projectId: p.project_id,
    status: p.status,
    platform: 'LINKEDIN',
    contentType: p.content_type,
    title: p.title,
    content: p.content,
    scheduledAt: p.scheduled_at?.toISOString() ?? null,
    createdAt: p.created_at.toISOString(),
    updatedAt: p.updated_at?.toISOString() ?? null,
  }));
  const cursor =
    hasMore && last ? Buffer.from(JSON.stringify({ c: last.created_at.toISOString(), i: last.id })).toString('base64url') : null;
  ctx.body = { data, pagination: { next_cursor: cursor, has_more: hasMore } };
});

serveUnderParent(http.createServer(app.callback()), {
  onStop: async () => {
    await pool.end();
    if (appDb) await appDb.closeDb();
    if (consume) await (await import('../../lib/redis')).closeRedis();
  },
});
