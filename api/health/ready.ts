import Router from '@koa/router';
import { Connection } from '@temporalio/client';
import { Redis } from 'ioredis';
import type { Knex } from 'knex';
import type { Context } from 'koa';
import { z } from 'zod';
import { createKnex, db } from '../../lib/db';
import { redis } from '../../lib/redis';
import { temporalClient } from '../../lib/temporal/client';

// GET /v1/health/ready (issue 17): readiness beside the liveness of /v1/health. Liveness says the
// process answers; readiness says it can do its work, so a load balancer or a Kubernetes
// readiness probe takes it out of rotation while Postgres, Redis or Temporal is unreachable
// and back once they answer. Unauthenticated like /v1/health; no workspace data, never cached.

export type Probe = () => Promise<void>;
export type Probes = Record<'postgres' | 'redis' | 'temporal', Probe>;

const checkSchema = z.object({ status: z.enum(['ok', 'unavailable']), ms: z.number().int(), error: z.string().optional() }).strict();

/** The answer, 200 when every check is ok and 503 otherwise; the OpenAPI document describes both with it. */
export const readinessSchema = z
  .object({
    data: z
      .object({
        status: z.enum(['ready', 'unready']),
        checks: z.object({ postgres: checkSchema, redis: checkSchema, temporal: checkSchema }).strict(),
      })
      .strict(),
  })
  .strict();

export type Readiness = z.infer<typeof readinessSchema>;
type Checks = Readiness['data']['checks'];

const TIMEOUT_MS = 2_000;

function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** The process's own clients (lib/db, lib/redis, lib/temporal). */
export function sharedProbes(): Probes {
  return {
    postgres: async () => {
      await db().raw('select 1');
    },
    redis: async () => {
      await redis().ping();
    },
    temporal: async () => {
      const client = await temporalClient();
      await client.workflowService.getSystemInfo({});
    },
  };
}

/** Probes of given addresses with clients of their own (operators' checks, tests); close() frees them. */
export function probesFor(targets: {
  databaseUrl: string;
  redisUrl: string;
  temporalAddress: string;
}): Probes & { close(): Promise<void> } {
  let knex: Knex | undefined;
  let r: Redis | undefined;
  let connection: Connection | undefined;
  return {
    postgres: async () => {
      knex ??= createKnex(targets.databaseUrl, { min: 0, max: 1 });
      await knex.raw('select 1');
    },
    redis: async () => {
      r ??= new Redis(targets.redisUrl, { maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => null });
      r.on('error', () => {});
      if (r.status !== 'ready') await r.connect().catch(() => {});
      await r.ping();
    },
    temporal: async () => {
      connection ??= await Connection.connect({ address: targets.temporalAddress, connectTimeout: TIMEOUT_MS });
      await connection.workflowService.getSystemInfo({});
    },
    close: async () => {
      await knex?.destroy();
      r?.disconnect();
      await connection?.close();
    },
  };
}

export async function readiness(probes: Probes): Promise<{ ready: boolean; checks: Checks }> {
  const names = ['postgres', 'redis', 'temporal'] as const;
  const entries = await Promise.all(
    names.map(async (name) => {
      const probe = probes[name];
      const started = performance.now();
      try {
        await within(TIMEOUT_MS, probe());
        return [name, { status: 'ok' as const, ms: Math.round(performance.now() - started) }] as const;
      } catch (err) {
        return [
          name,
          {
            status: 'unavailable' as const,
            ms: Math.round(performance.now() - started),
            error: err instanceof Error ? err.message.slice(0, 200) : String(err),
          },
        ] as const;
      }
    }),
  );
  const checks = Object.fromEntries(entries) as Checks;
  return { ready: entries.every(([, c]) => c.status === 'ok'), checks };
}

export function readinessRouter(probes: Probes = sharedProbes()): Router {
  const r = new Router();
  r.get('/v1/health/ready', async (ctx: Context) => {
    ctx.state.handled = true;
    const { ready, checks } = await readiness(probes);
    ctx.status = ready ? 200 : 503;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { data: { status: ready ? 'ready' : 'unready', checks } } satisfies Readiness;
  });
  return r;
}
