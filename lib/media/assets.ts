import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { planLimits, type PlanLimits } from '../config';
import { db, readPrepared, shapedRead } from '../db';
import { ApiError, errors } from '../errors';
import { newId } from '../ids';
import { effectiveLimit } from '../limits';
import { MediaAsset as MediaAssetModel, WorkspaceStorage, type MediaAssetColumns } from '../models';
import { objectStore, type ObjectStore } from '../storage/objectStore';
import { extensionOf, sniffImage, type ImageType } from './images';

// The media library (spec 2.13, 4.7). Objects are keyed by workspace and SHA-256 of their bytes,
// so the same image imported twice is one asset and a retried import lands on the same key;
// (workspace_id, sha256) is unique in the table and settles concurrent imports of one image.

/** An asset row: the columns of the model. */
export type AssetRow = MediaAssetColumns;

export function assetKey(workspaceId: string, sha256: string, type: ImageType): string {
  return `${workspaceId}/media/${sha256}.${extensionOf(type)}`;
}

export function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export async function storageUsed(
  workspaceId: string,
  trx: Knex | Knex.Transaction = db(),
): Promise<{ usedBytes: number; usedAssets: number }> {
  // Kept by a trigger on media_assets as assets come and go (migration 20261202100300).
  const [r] = await readPrepared<StorageUsedRow>(storageUsedRead(null, { workspaceId }), { on: trx });
  return storageUsedOf(r);
}

type StorageUsedRow = Pick<WorkspaceStorage, 'used_bytes' | 'used_assets'>;

/** The meters of a `workspace_storage` row, or of none (a workspace without media). */
export function storageUsedOf(r: Partial<Record<keyof StorageUsedRow, string | number | null>> | undefined) {
  return { usedBytes: Number(r?.used_bytes ?? 0), usedAssets: Number(r?.used_assets ?? 0) };
}

// The storage meters' reads are compiled once and sent as prepared statements (lib/db.ts
// `shapedRead`), on the knex or the transaction the caller hands them, as lib/spend/meters.ts
// reads the AI meters. GET /v1/usage reads both with the AI meters in one statement, through
// STORAGE_LIMIT_COLUMNS, storageLimitsOf and storageUsedOf (api/operations/usage/queries.ts).

const storageUsedRead = shapedRead((_shape: null, param: (name: 'workspaceId') => string) =>
  WorkspaceStorage.forWorkspace(param('workspaceId')).select('used_bytes', 'used_assets').toKnexQuery(),
);

const storageLimitsRead = shapedRead((_shape: null, param: (name: 'workspaceId') => string) =>
  storageLimitsQuery(param('workspaceId'), db()),
);

export type StorageLimits = Pick<PlanLimits, 'storageLimitBytes' | 'assetLimit'>;

/**
 * The storage limits in force for a workspace: those of the plan that gates it (an agency's
 * plan pays for the workspaces it bills, spec 5.5, as for the AI limits), unless an operator
 * overrode them (workspaces.storage_limit_bytes / asset_limit, lib/limits.ts). GET /v1/usage
 * shows these, and imports are refused beyond them.
 */
export async function workspaceStorageLimits(workspaceId: string, trx: Knex | Knex.Transaction = db()): Promise<StorageLimits> {
  const [w] = await readPrepared<StorageLimitsRow>(storageLimitsRead(null, { workspaceId }), { on: trx });
  return storageLimitsOf(w);
}

export interface StorageLimitsRow {
  plan: string;
  billing_plan: string | null;
  storage_limit_bytes: string | number | null;
  asset_limit: number | null;
}

/** The operator's storage overrides, read from the workspace `w` beside its plan and its billing workspace's (`b`). */
export const STORAGE_LIMIT_COLUMNS = ['w.storage_limit_bytes', 'w.asset_limit'];

function storageLimitsQuery(workspaceId: string, trx: Knex | Knex.Transaction) {
  return trx('workspaces as w')
    .leftJoin('workspaces as b', 'b.id', 'w.billing_workspace_id')
    .where('w.id', workspaceId)
    .first('w.plan', 'b.plan as billing_plan', ...STORAGE_LIMIT_COLUMNS);
}

/** The limits in force from a row read with the plans and STORAGE_LIMIT_COLUMNS. */
export function storageLimitsOf(w: StorageLimitsRow | undefined): StorageLimits {
  const plan = planLimits(w?.billing_plan ?? w?.plan ?? 'FREE');
  return {
    storageLimitBytes: effectiveLimit(w?.storage_limit_bytes, plan.storageLimitBytes),
    assetLimit: effectiveLimit(w?.asset_limit, plan.assetLimit),
  };
}

/** spec 2.16 storage meters, from the assets table and the limits in force (null = unlimited). */
export function storageMeters(used: { usedBytes: number; usedAssets: number }, plan: StorageLimits) {
  return {
    usedBytes: used.usedBytes,
    limitBytes: plan.storageLimitBytes,
    percentUsed: plan.storageLimitBytes ? Math.min(100, Math.floor((used.usedBytes * 100) / plan.storageLimitBytes)) : 0,
    usedAssets: used.usedAssets,
    assetLimit: plan.assetLimit,
  };
}

/** docs/media.md "Storage limits": 402 usage_limit_exceeded, like the weekly AI budget. */
function storageLimitError(meter: 'storage_bytes' | 'storage_assets', limit: number, used: number, requested: number): ApiError {
  const what =
    meter === 'storage_bytes'
      ? `${requested} more bytes would exceed the plan's storage of ${limit} bytes (${used} used)`
      : `one more asset would exceed the plan's ${limit} assets`;
  return new ApiError('usage_limit_exceeded', `Storage limit reached: ${what}.`, { meter, limit, used, requested });
}

/** Refuses an import of `bytes` more that would exceed the workspace's asset or byte limit. */
function checkStorageLimits(plan: StorageLimits, used: { usedBytes: number; usedAssets: number }, bytes: number): void {
  if (plan.assetLimit !== null && used.usedAssets + 1 > plan.assetLimit)
    throw storageLimitError('storage_assets', plan.assetLimit, used.usedAssets, 1);
  if (plan.storageLimitBytes !== null && used.usedBytes + bytes > plan.storageLimitBytes)
    throw storageLimitError('storage_bytes', plan.storageLimitBytes, used.usedBytes, bytes);
}

export interface ImportInput {
  workspaceId: string;
  projectId: string | null;
  bytes: Buffer;
  /** The type the caller declared (inline mimeType / fileName, or the upload's stored type); must agree with the sniffed one. */
  declaredType: string | null;
  fileName: string | null;
  alt?: string;
  title?: string;
  uploadId?: string | null;
}

/**
 * Imports bytes into the library: sniff (a real image of an accepted format), dedupe by SHA-256,
 * check the plan's storage limits, store the object under its content key, insert the row.
 * Returns the existing asset when the workspace already holds these bytes.
 */
export async function importAsset(input: ImportInput, store: ObjectStore = objectStore()): Promise<{ asset: AssetRow; created: boolean }> {
  const sniffed = await sniffImage(input.bytes);
  if (input.declaredType && input.declaredType !== sniffed.mimeType) {
    throw errors.unprocessable(`The bytes are ${sniffed.mimeType}, not the declared ${input.declaredType}.`, {
      declaredType: input.declaredType,
      detectedType: sniffed.mimeType,
    });
  }
  const sha256 = sha256Hex(input.bytes);
  const sameBytes = (trx: Knex | Knex.Transaction = db()) =>
    MediaAssetModel.forWorkspace(input.workspaceId, trx).where({ sha256 }).first().castTo<AssetRow | undefined>();
  // One round trip asks both questions an import starts with: whether the workspace holds these
  // bytes already, and the storage limits in force.
  const knex = db();
  const found = (await storageLimitsQuery(input.workspaceId, knex).select(
    knex.raw('(select to_json(a) from (?) a) as same_bytes', [sameBytes(knex).toKnexQuery()]),
  )) as (StorageLimitsRow & { same_bytes: (Omit<AssetRow, 'created_at'> & { created_at: string }) | null }) | undefined;
  if (found?.same_bytes) return { asset: { ...found.same_bytes, created_at: new Date(found.same_bytes.created_at) }, created: false };

  const plan = storageLimitsOf(found);
  const limited = plan.assetLimit !== null || plan.storageLimitBytes !== null;
  // A first, unlocked look refuses an import over the limit before its bytes are stored.
  if (limited) checkStorageLimits(plan, await storageUsed(input.workspaceId), input.bytes.length);

  const key = assetKey(input.workspaceId, sha256, sniffed.mimeType);
  // Content-addressed: writing the same bytes again (a retry, a concurrent import) is harmless.
  await store.put(key, input.bytes, sniffed.mimeType, sha256);
  const row = {
    id: newId('mediaAsset'),
    workspace_id: input.workspaceId,
    project_id: input.projectId,
    key,
    sha256,
    mime_type: sniffed.mimeType,
    bytes: input.bytes.length,
    width: sniffed.width,
    height: sniffed.height,
    alt: input.alt ?? '',
    title: input.title ?? '',
    file_name: input.fileName,
    upload_id: input.uploadId ?? null,
  };
  const insert = async (trx: Knex | Knex.Transaction) =>
    (await trx('media_assets').insert(row).onConflict(['workspace_id', 'sha256']).ignore().returning('*')) as AssetRow[];
  // Without a limit there is nothing to count, so no lock and no transaction: the unique
  // (workspace_id, sha256) settles a concurrent import of the same bytes.
  const inserted = !limited
    ? await insert(knex)
    : await knex.transaction(async (trx) => {
        // docs/media.md "Storage limits": the check that counts runs under a per-workspace lock, so
        // imports at the same moment are checked one after another and never overshoot the plan.
        await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`media-storage:${input.workspaceId}`]);
        if (await sameBytes(trx)) return [] as AssetRow[];
        checkStorageLimits(plan, await storageUsed(input.workspaceId, trx), input.bytes.length);
        return insert(trx);
      });
  if (inserted[0]) return { asset: inserted[0], created: true };
  // A concurrent import of the same bytes won the insert.
  return { asset: (await sameBytes())!, created: false };
}
