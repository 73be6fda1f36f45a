// Bench: media imports and uploads against the embedded object store, each import beside its
// bare work, then the media list beside its statements bare (bench/README.md, "media").

import os from 'node:os';
import pg from 'pg';
import { summarize } from './harness/load';
import { measureReads } from './harness/statements';
import { resetStores, setBenchEnvironment } from './harness/database';
import { benchFlags } from './harness/options';
import { startServer, withServerCpu } from './harness/servers';
import { objectStoreEnv, startObjectStore } from '../tooling/objectStoreServer';
import { png } from '../tooling/png';
import type { AssetRow } from '../lib/media/assets';
import type { ImageType } from '../lib/media/images';
import { loadAverage, step, tally } from './harness/format';

const opt = benchFlags(
  'media: inline imports, presigned PUTs, upload imports and bare store PUTs, all at once.',
  {
    count: { default: 200, min: 1, integer: true, help: 'images per phase, sent at once' },
    bytes: { default: 1024 * 1024, min: 1, help: 'approximate size of each PNG' },
    rounds: { default: 2, integer: true, help: 'measured rounds (default 2), after one unmeasured warm-up of 10' },
    explain: { type: 'boolean', help: "EXPLAIN (ANALYZE, BUFFERS) of the media list's statements and its minimal query" },
    profile: { type: 'boolean', help: "the API's CPU profile per import over each measured import burst (its overhead is in the figures)" },
  },
  'Then GET /v1/media beside the same statements bare and the minimal query (bench/harness/statements.ts).',
);

const DATABASE_URL = process.env.BENCH_MEDIA_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_media';
const REDIS_URL = process.env.BENCH_MEDIA_REDIS_URL ?? 'redis://127.0.0.1:6379/12';

const store = await startObjectStore({ log: () => {} });
// The bench measures the handlers, not the write bucket (60/min per workspace by default).
setBenchEnvironment(DATABASE_URL, REDIS_URL, { ...objectStoreEnv(store), LOG_LEVEL: 'error' });
step(`object store ${store.endpoint}; database ${DATABASE_URL}`);
await resetStores(DATABASE_URL, REDIS_URL);
const { db, closeDb } = await import('../lib/db');
const { config } = await import('../lib/config');
const { newId } = await import('../lib/ids');
const { assetKey, sha256Hex } = await import('../lib/media/assets');
const { uploadObjectKey } = await import('../lib/media/uploads');
const { benchWorkspace } = await import('./harness/seed');
const { S3ObjectStore, s3OptionsFromConfig } = await import('../lib/storage/objectStore');
const bare = new S3ObjectStore(s3OptionsFromConfig());
await bare.ensureBucket();
const api = await startServer('api', 'bench/harness/serve-app.ts', process.env);
// The bare work's connections: as many as the API's pool.
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: config.dbPoolMax });

/** A phase: `items` sent at once, each by `one` (its status). */
async function burst(name: string, items: Buffer[], one: (b: Buffer, i: number) => Promise<number>) {
  const latencies: number[] = [];
  const errors: Record<string, number> = {};
  let ok = 0;
  const started = performance.now();
  await Promise.all(
    items.map(async (b, i) => {
      const t0 = performance.now();
      const status = await one(b, i).catch((err: { cause?: { code?: string }; name: string }) => err.cause?.code ?? err.name);
      if (typeof status === 'number' && status >= 200 && status < 300) ok++;
      else tally(errors, String(status));
      latencies.push(performance.now() - t0);
    }),
  );
  const wallMs = performance.now() - started;
  const mib = items.reduce((n, b) => n + b.length, 0) / 1024 / 1024;
  return { name, wallMs, perSecond: (ok * 1000) / wallMs, mbPerSecond: mib / (wallMs / 1000), ok, errors, latencyMs: summarize(latencies) };
}

/** A burst against the API, with the API process's CPU per successful import (and its profile with `profile`). */
async function apiBurst(profile: boolean, ...args: Parameters<typeof burst>) {
  const title = profile ? { file: `media-${args[0].split(' ')[0]}`, title: `API process over ${args[0]} (per import)` } : undefined;
  const work = () => burst(...args);
  const { result, cpuUs } = await withServerCpu(api, work, (p) => p.ok, title);
  return { ...result, apiCpuMs: cpuUs / 1000 };
}

/**
 * The INSERT importAsset (lib/media/assets.ts) runs for each asset of workspace `from`, as knex
 * writes it, made for a copy of the asset in workspace `to` under the key the service gives it
 * there (so neither the key nor (workspace_id, sha256) meets the service's row); by SHA-256.
 */
async function assetInserts(from: string, to: { workspaceId: string; projectId: string }) {
  const rows: AssetRow[] = await db()('media_assets').where({ workspace_id: from });
  return new Map(
    rows.map(({ created_at: _createdAt, ...row }) => {
      const sha256 = row.sha256.trim();
      const key = assetKey(to.workspaceId, sha256, row.mime_type as ImageType);
      const copy = { ...row, id: newId('mediaAsset'), workspace_id: to.workspaceId, project_id: to.projectId, key, sha256 };
      const insert = db()('media_assets').insert(copy).onConflict(['workspace_id', 'sha256']).ignore().returning('*');
      const { sql, bindings } = insert.toSQL().toNative();
      return [sha256, { key, mimeType: row.mime_type, sql, bindings: [...bindings] }];
    }),
  );
}

/** One round's import beside its bare work: the bytes PUT under the service's key and its INSERT (500: the API's import of them failed). */
async function putInsert(insert: { key: string; mimeType: string; sql: string; bindings: unknown[] } | undefined, bytes: Buffer) {
  if (!insert) return 500;
  await bare.put(insert.key, bytes, insert.mimeType);
  await pool.query(insert.sql, insert.bindings);
  return 200;
}

// A fresh ENTERPRISE workspace per round (no storage limits, and dedupe never hits).
const enterprise = (name: string, scopes: string[]) =>
  benchWorkspace({ name, plan: 'ENTERPRISE', project: { name: 'Bench person', connection: 'none' }, scopes });
// An HTTP call of a burst, its body read: its status.
const send = (url: string, init: RequestInit) => fetch(url, init).then(async (r) => (await r.arrayBuffer(), r.status));

try {
  // One unmeasured round of 10, then --rounds rounds of --count images.
  const side = Math.floor(Math.sqrt(opt.bytes / 3));
  const rounds = [];
  let last = { workspaceId: '', key: '' };
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
    const inline = await apiBurst(profile, 'inline import (POST /v1/media, base64)', inlineImages, (_b, i) =>
      send(`${api.baseUrl}/v1/media`, { method: 'POST', headers: auth, body: bodies[i] }),
    );
    const minted: Array<{ id: string; url: string; headers: Record<string, string> }> = [];
    const mint = await burst('mint (POST /v1/uploads)', uploadImages, async (b, i) => {
      const body = JSON.stringify({ fileName: `b${i}.png`, contentType: 'image/png', bytes: b.length, purpose: 'media' });
      const r = await fetch(`${api.baseUrl}/v1/uploads`, { method: 'POST', headers: auth, body });
      minted[i] = ((await r.json()) as { data: (typeof minted)[number] }).data;
      return r.status;
    });
    const presigned = await burst('presigned PUT to the store', uploadImages, (b, i) =>
      send(minted[i]!.url, { method: 'PUT', headers: minted[i]!.headers, body: b }),
    );
    const fromUpload = await apiBurst(profile, 'import from upload (POST /v1/media, uploadId)', uploadImages, (_b, i) =>
      send(`${api.baseUrl}/v1/media`, { method: 'POST', headers: auth, body: JSON.stringify({ projectId, uploadId: minted[i]!.id }) }),
    );
    const barePut = await burst('bare PUT to the store (AWS SDK)', uploadImages, (b, i) =>
      bare.put(`bench/${round}/${i}`, b, 'image/png').then(() => 200),
    );
    // Each import's bare work, into a workspace of its own (see assetInserts).
    const twin = await enterprise(`Bench media ${round} bare`, ['read']);
    const inserts = await assetInserts(ws.id, { workspaceId: twin.workspace.id, projectId: twin.project.id as string });
    const [inlineInserts, uploadInserts] = [inlineImages, uploadImages].map((images) => images.map((b) => inserts.get(sha256Hex(b))));
    const bareInline = await burst("bare PUT+INSERT (inline import's work)", inlineImages, (b, i) => putInsert(inlineInserts[i], b));
    const bareUpload = await burst("bare GET+PUT+INSERT (upload import's)", uploadImages, async (_b, i) =>
      putInsert(uploadInserts[i], (await bare.get(uploadObjectKey(ws.id, minted[i]!.id)))!),
    );
    last = { workspaceId: ws.id, key };
    if (round === 0) continue;
    const phases = [inline, mint, presigned, fromUpload, barePut, bareInline, bareUpload];
    const imports = [['inline', inline, bareInline] as const, ['upload', fromUpload, bareUpload] as const];
    rounds.push({ n, mib: inlineImages[0]!.length / 1024 / 1024, phases, imports });
  }

  // GET /v1/media (the first page of the last round's library) beside its statements bare and the minimal query.
  const assets = async () =>
    `${(await pool.query('select count(*) from media_assets where workspace_id = $1', [last.workspaceId])).rows[0].count} assets`;
  const text = `select * from media_assets where workspace_id = $1 order by created_at desc, id desc limit ${config.media.listDefault + 1}`;
  const headers = { Authorization: `Bearer ${last.key}` };
  const surfaces = [{ surface: 'media list', path: '/v1/media', headers, minimal: { text, values: [last.workspaceId] } }];
  const sizes = [{ corpus: assets }];
  await measureReads({ api, pool, sizes, surfaces, explain: opt.explain, connections: 8, durationMs: 10_000, warmupMs: 3_000 });

  rounds.forEach(({ n, mib, phases, imports }, i) => {
    console.log(`\nround ${i + 1}: ${n} images of ${mib.toFixed(2)} MiB, each phase sent at once`);
    console.log('phase                                             ok    wall s   per s   MiB/s   p50 ms   p99 ms   max ms  errors');
    for (const p of phases) {
      const l = p.latencyMs;
      console.log(
        `${p.name.padEnd(48)} ${String(p.ok).padStart(4)} ${(p.wallMs / 1000).toFixed(2).padStart(8)} ${p.perSecond.toFixed(1).padStart(7)} ${p.mbPerSecond.toFixed(1).padStart(7)} ${l.p50.toFixed(0).padStart(8)} ${l.p99.toFixed(0).padStart(8)} ${l.max.toFixed(0).padStart(8)}  ${JSON.stringify(p.errors)}`,
      );
    }
    // issue 30: an import beside the bare work of the same request, in the same round.
    for (const [label, api, bare] of imports)
      console.log(
        `  media import ${label} [${mib.toFixed(2)} MiB]: API ${api.perSecond.toFixed(1)}/s (API process CPU ${api.apiCpuMs.toFixed(1)} ms/import) · ` +
          `bare ${bare.perSecond.toFixed(1)}/s · API / bare PUT+INSERT: ${(api.perSecond / bare.perSecond).toFixed(2)}×`,
      );
  });
  console.log(`\nmachine: ${os.cpus().length} CPUs, load average ${loadAverage(1)}`);
} finally {
  await Promise.all([api.stop(), pool.end(), closeDb()]);
  await store.stop();
}
process.exit(0);
