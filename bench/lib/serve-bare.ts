import http from 'node:http';
import Koa from 'koa';
import pg from 'pg';
import { serveUnderParent } from './serverChild';

// Server (b) of the posts-list bench, the baseline: what the same page costs with nothing but
// Koa and the pg driver — one query, the same JSON shape, no auth, no rate limiting, no
// router, no validation, no query builder. Whatever server (a) spends beyond this is the
// price of the service's own machinery, which is what the ratio in the report measures.

const workspaceId = process.env.BENCH_WORKSPACE_ID;
if (!workspaceId) throw new Error('BENCH_WORKSPACE_ID is not set');

// Same pool size as lib/db's knex pool (max 10), so neither side gets more database sessions.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
pool.on('error', () => undefined);

const SQL = `select id, project_id, status, content_type, title, content, scheduled_at, created_at, updated_at
  from posts where workspace_id = $1 and project_id = $2 and deleted_at is null
  order by created_at desc, id desc limit $3`;

interface Row {
  id: string; project_id: string | null; status: string; content_type: string; title: string; content: string;
  scheduled_at: Date | null; created_at: Date; updated_at: Date | null;
}

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method !== 'GET' || ctx.path !== '/v1/posts') {
    ctx.status = 404;
    return;
  }
  const projectId = String(ctx.query.projectId ?? '');
  const limit = Math.min(200, Math.max(1, Number.parseInt(String(ctx.query.limit ?? '50'), 10) || 50));
  const { rows } = await pool.query<Row>(SQL, [workspaceId, projectId, limit + 1]);
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  ctx.body = {
    // Field for field what lib/posts/present's presentPostSummary returns.
    data: page.map((p) => ({
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
    })),
    pagination: {
      // Same position the real cursor carries, but unsigned and not bound to filters: the
      // baseline does the least work that still yields a usable cursor.
      next_cursor: hasMore && last ? Buffer.from(JSON.stringify({ c: last.created_at.toISOString(), i: last.id })).toString('base64url') : null,
      has_more: hasMore,
    },
  };
});

serveUnderParent(http.createServer(app.callback()), { onStop: () => pool.end() });
