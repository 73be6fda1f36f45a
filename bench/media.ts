// Bench: media imports and uploads against the embedded object store, each import beside its
// bare work, then the media list beside its statements bare (bench/README.md, "media").

import os from 'node:os';
import pg from 'pg';
import { summarize } from './harness/load';
import { measureReads } from './harness/statements';
import { resetStores, setBenchEnvironment } from './harness/database';
import { benchFlags } from './harness/options';
import { startServer, withServerCpu, type ServerHandle } from './harness/servers';
import { objectStoreEnv, startObjectStore } from '../tooling/objectStoreServer';
import { png } from '../tooling/png';
import type { AssetRow } from '../lib/media/assets';
import type { ImageType } from '../lib/media/images';
import { loadAverage, step } from './harness/format';

const opt = benchFlags(
  'media: inline imports, presigned PUTs, upload imports and bare store PUTs, all at once.',
  {
    count: { default: 200, min: 1, integer: true, help: 'images per phase, sent at once' },
    bytes: { default: 1024 * 1024, min: 1, help: 'approximate size of each PNG' },
    rounds: { default: 2, integer: true, help: 'measured rounds (default 2), after one unmeasured warm-up of 10' },
    explain: { type: 'boolean', help: "EXPLAIN (ANALYZE, BUFFERS) of the media list's statements and its minimal query" },
    profile: {
      type: 'boolean',
      help: "the API process's CPU profile over each measured import burst, per import\n(the profiler's overhead is in that round's figures)",
    },
  },
  'Then GET /v1/media beside the same statements bare and the minimal query (bench/harness/statements.ts).',
);

const DATABASE_URL = process.env.BENCH_MEDIA_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_media';
const REDIS_URL = process.env.BENCH_MEDIA_REDIS_URL ?? 'redis://127.0.0.1:6379/12';

/** A phase: `items` sent at once, each by `one` (its status); of an API phase, its CPU per import too (apiBurst). */
type Phase = Awaited<ReturnType<typeof burst>> & { apiCpuMs?: number };

async function burst(name: string, items: Buffer[], one: (b: Buffer, i: number) => Promise<number>) {
  const latencies: number[] = [];
  const errors: Record<string, number> = {};
  let ok = 0;
  const started = performance.now();
  await Promise.all(
    items.map(async (b, i) => {
      const t0 = performance.now();
      try {
        const status = await one(b, i);
        if (status >= 200 && status < 300) ok++;
        else errors[String(status)] = (errors[String(status)] ?? 0) + 1;
      } catch (err) {
        const code = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
        errors[code] = (errors[code] ?? 0) + 1;
      }
      latencies.push(performance.now() - t0);
    }),
  );
  const wallMs = performance.now() - started;
  const mib = items.reduce((n, b) => n + b.length, 0) / 1024 / 1024;
  return { name, wallMs, perSecond: (ok * 1000) / wallMs, mbPerSecond: mib / (wallMs / 1000), ok, errors, latencyMs: summarize(latencies) };
}

/** A burst against the API, with the API process's CPU per successful import (and its profile with `profile`). */
async function apiBurst(api: ServerHandle, profile: boolean, ...args: Parameters<typeof burst>): Promise<Phase> {
  const file = `media-${args[0].split(' ')[0]}`;
  const { result, cpuUs } = await withServerCpu(
    api,
    () => burst(...args),
    (p) => p.ok,
    profile ? { file, title: `API process over ${args[0]} (per import)` } : undefined,
  );
  return { ...result, apiCpuMs: cpuUs / 1000 };
}

/**
 * The INSERT importAsset (lib/media/assets.ts) runs for each asset of workspace `from`, as knex
 * writes it, made for a copy of the asset in workspace `to` under the key the service gives it
 * there (so neither the key nor (workspace_id, sha256) meets the service's row); by SHA-256.
 */
async function assetInserts(from: string, to: { workspaceId: string; projectId: string }) {
  const { db } = await import('../lib/db');
  const { newId } = await import('../lib/ids');
  const { assetKey } = await import('../lib/media/assets');
  const rows: AssetRow[] = await db()('media_assets').where({ workspace_id: from });
  return new Map(
    rows.map(({ created_at: _createdAt, ...row }) => {
      const sha256 = row.sha256.trim();
      const key = assetKey(to.workspaceId, sha256, row.mime_type as ImageType);
      const copy = { ...row, id: newId('mediaAsset'), workspace_id: to.workspaceId, project_id: to.projectId, key, sha256 };
      const { sql, bindings } = db()('media_assets')
        .insert(copy)
        .onConflict(['workspace_id', 'sha256'])
        .ignore()
        .returning('*')
        .toSQL()
        .toNative();
      return [sha256, { key, mimeType: row.mime_type, sql, bindings: [...bindings] }];
    }),
  );
}
type AssetInsert = ReturnType<typeof assetInserts> extends Promise<Map<string, infer I>> ? I : never;

type Bench = Awaited<ReturnType<typeof setUp>>;
type Round = Phase[] & { images: number; mib: number; imports: Array<{ label: string; api: Phase; bare: Phase }> };

/** The object store, the bench's stores, the API process, and the store as the SDK sees it. */
async function setUp() {
  const store = await startObjectStore({ log: () => {} });
  // The bench measures the handlers, not the write bucket (60/min per workspace by default).
  setBenchEnvironment(DATABASE_URL, REDIS_URL, { ...objectStoreEnv(store), LOG_LEVEL: 'error' });
  step(`object store ${store.endpoint}; database ${DATABASE_URL}`);
  await resetStores(DATABASE_URL, REDIS_URL);
  const { S3ObjectStore, s3OptionsFromConfig } = await import('../lib/storage/objectStore');
  const bare = new S3ObjectStore(s3OptionsFromConfig());
  await bare.ensureBucket();
  const api = await startServer('api', 'bench/harness/serve-app.ts', process.env);
  // The bare work's connections: as many as the API's pool.
  const { config } = await import('../lib/config');
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: config.dbPoolMax });
  return { store, bare, api, pool };
}

/** One unmeasured round of 10, then --rounds rounds of --count images, each in a fresh ENTERPRISE workspace. */
async function importRounds({ bare, api, pool }: Bench) {
  const { benchWorkspace } = await import('./harness/seed');
  const { sha256Hex } = await import('../lib/media/assets');
  const { uploadObjectKey } = await import('../lib/media/uploads');
  const putInsert = async (insert: AssetInsert | undefined, bytes: Buffer) => {
    if (!insert) return 500; // the API's import of these bytes failed
    await bare.put(insert.key, bytes, insert.mimeType);
    await pool.query(insert.sql, insert.bindings);
    return 200;
  };
  // A fresh ENTERPRISE workspace per round (no storage limits, and dedupe never hits).
  const enterprise = (name: string, scopes: string[]) =>
    benchWorkspace({ name, plan: 'ENTERPRISE', project: { name: 'Bench person', connection: 'none' }, scopes });
  // An HTTP call of a burst, its body read: its status.
  const send = async (url: string, init: RequestInit) => {
    const r = await fetch(url, init);
    await r.arrayBuffer();
    return r.status;
  };
  const side = Math.floor(Math.sqrt(opt.bytes / 3));
  const rounds: Round[] = [];
  let last: { workspaceId: string; key: string } | null = null;
  for (let round = 0; round <= opt.rounds; round++) {
    const n = round === 0 ? 10 : opt.count;
    // spec 4.7: an API key names the project a media asset belongs to.
    const { workspace: ws, project, key } = await enterprise(`Bench media ${round}`, ['read', 'write']);
    const projectId = project.id as string;
    const auth = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const inlineImages = Array.from({ length: n }, () => png(side, side));
    const uploadImages = Array.from({ length: n }, () => png(side, side));
    const bodies = inlineImages.map((b) => JSON.stringify({ projectId, content_base64: b.toString('base64') }));

    const profile = opt.profile && round > 0;
    const inline = await apiBurst(api, profile, 'inline import (POST /v1/media, base64)', inlineImages, (_b, i) =>
      send(`${api.baseUrl}/v1/media`, { method: 'POST', headers: auth, body: bodies[i] }),
    );
    const minted: Array<{ id: string; url: string; headers: Record<string, string> }> = [];
    const mint = await burst('mint (POST /v1/uploads)', uploadImages, async (b, i) => {
      const r = await fetch(`${api.baseUrl}/v1/uploads`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ fileName: `b${i}.png`, contentType: 'image/png', bytes: b.length, purpose: 'media' }),
      });
      minted[i] = ((await r.json()) as { data: { id: string; url: string; headers: Record<string, string> } }).data;
      return r.status;
    });
    const presigned = await burst('presigned PUT to the store', uploadImages, (b, i) =>
      send(minted[i]!.url, { method: 'PUT', headers: minted[i]!.headers, body: b }),
    );
    const fromUpload = await apiBurst(api, profile, 'import from upload (POST /v1/media, uploadId)', uploadImages, (_b, i) =>
      send(`${api.baseUrl}/v1/media`, { method: 'POST', headers: auth, body: JSON.stringify({ projectId, uploadId: minted[i]!.id }) }),
    );
    const barePut = await burst('bare PUT to the store (AWS SDK)', uploadImages, async (b, i) => {
      await bare.put(`bench/${round}/${i}`, b, 'image/png');
      return 200;
    });
    // Each import's bare work, into a workspace of its own (see assetInserts).
    const twin = await enterprise(`Bench media ${round} bare`, ['read']);
    const inserts = await assetInserts(ws.id, { workspaceId: twin.workspace.id, projectId: twin.project.id as string });
    const insertOf = (images: Buffer[]) => images.map((b) => inserts.get(sha256Hex(b)));
    const [inlineInserts, uploadInserts] = [insertOf(inlineImages), insertOf(uploadImages)];
    const bareInline = await burst("bare PUT+INSERT (inline import's work)", inlineImages, (b, i) => putInsert(inlineInserts[i], b));
    const bareUpload = await burst("bare GET+PUT+INSERT (upload import's)", uploadImages, async (_b, i) =>
      putInsert(uploadInserts[i], (await bare.get(uploadObjectKey(ws.id, minted[i]!.id)))!),
    );
    last = { workspaceId: ws.id, key };
    if (round === 0) continue;
    rounds.push(
      Object.assign([inline, mint, presigned, fromUpload, barePut, bareInline, bareUpload], {
        images: n,
        mib: inlineImages[0]!.length / 1024 / 1024,
        imports: [
          { label: 'inline', api: inline, bare: bareInline },
          { label: 'upload', api: fromUpload, bare: bareUpload },
        ],
      }),
    );
  }
  return { rounds, last };
}

/** GET /v1/media (the first page of the last round's library) beside its statements bare and the minimal query. */
async function measureList({ api, pool }: Bench, last: { workspaceId: string; key: string }) {
  const { config } = await import('../lib/config');
  const assets = async () =>
    `${(await pool.query('select count(*) from media_assets where workspace_id = $1', [last.workspaceId])).rows[0].count} assets`;
  const text = `select * from media_assets where workspace_id = $1 order by created_at desc, id desc limit ${config.media.listDefault + 1}`;
  const headers = { Authorization: `Bearer ${last.key}` };
  const surfaces = [{ surface: 'media list', path: '/v1/media', headers, minimal: { text, values: [last.workspaceId] } }];
  await measureReads({
    api,
    pool,
    sizes: [{ corpus: assets }],
    surfaces,
    explain: opt.explain,
    connections: 8,
    durationMs: 10_000,
    warmupMs: 3_000,
  });
}

function report(rounds: Round[]) {
  rounds.forEach((phases, i) => {
    console.log(`\nround ${i + 1}: ${phases.images} images of ${phases.mib.toFixed(2)} MiB, each phase sent at once`);
    console.log('phase                                             ok    wall s   per s   MiB/s   p50 ms   p99 ms   max ms  errors');
    for (const p of phases) {
      const l = p.latencyMs;
      console.log(
        `${p.name.padEnd(48)} ${String(p.ok).padStart(4)} ${(p.wallMs / 1000).toFixed(2).padStart(8)} ${p.perSecond.toFixed(1).padStart(7)} ${p.mbPerSecond.toFixed(1).padStart(7)} ${l.p50.toFixed(0).padStart(8)} ${l.p99.toFixed(0).padStart(8)} ${l.max.toFixed(0).padStart(8)}  ${JSON.stringify(p.errors)}`,
      );
    }
    // issue 30: an import beside the bare work of the same request, in the same round.
    for (const { label, api, bare } of phases.imports)
      console.log(
        `  media import ${label} [${phases.mib.toFixed(2)} MiB]: API ${api.perSecond.toFixed(1)}/s (API process CPU ${api.apiCpuMs!.toFixed(1)} ms/import) · ` +
          `bare ${bare.perSecond.toFixed(1)}/s · API / bare PUT+INSERT: ${(api.perSecond / bare.perSecond).toFixed(2)}×`,
      );
  });
  console.log(`\nmachine: ${os.cpus().length} CPUs, load average ${loadAverage(1)}`);
}

const bench = await setUp();
try {
  const { rounds, last } = await importRounds(bench);
  if (last) await measureList(bench, last);
  report(rounds);
} finally {
  await bench.api.stop();
  await bench.pool.end();
  const { closeDb } = await import('../lib/db');
  await closeDb();
  await bench.store.stop();
}
process.exit(0);
