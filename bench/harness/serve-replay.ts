import http from 'node:http';
import Koa from 'koa';
import pg from 'pg';
import { serveUnderParent } from './serverChild';
import { replayer, type CapturedStatement } from './statements';

// The read surfaces' HTTP floor: captured statements (`load`) replayed behind nothing but Koa and
// pg, their rows answered as JSON; GET /replay?key=… replays a surface's requests in turn.

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_MAX || 20) });
pool.on('error', () => undefined);

const sets = new Map<string, { replays: Array<() => Promise<unknown[][]>>; next: number }>();

const app = new Koa();
app.use(async (ctx) => {
  const set = ctx.path === '/replay' ? sets.get(String(ctx.query.key)) : undefined;
  if (!set) return void (ctx.status = 404);
  ctx.body = { data: await set.replays[set.next++ % set.replays.length]!() };
});

serveUnderParent(http.createServer(app.callback()), {
  onStop: () => pool.end(),
  calls: {
    load: async (args) => {
      const { key, captured } = args as { key: string; captured: CapturedStatement[][] };
      sets.set(key, { replays: captured.map((c) => replayer(pool, c)), next: 0 });
    },
  },
});
