import { createHash } from 'node:crypto';
import { config } from '../lib/config';
import { decrypt, encrypt } from '../lib/crypto';
import { db } from '../lib/db';
import { ApiError, errors } from '../lib/errors';
import { IdempotencyKey } from '../lib/models';

// spec 8 Idempotency: same key + same body within 24 h replays the first answer; a different
// body is 409 idempotency_key_conflict; two concurrent requests with one key never both run.
// The key row is claimed with an INSERT before the handler runs; the loser waits for the
// winner's answer. A claim whose process died is taken over once its lock lapses.

const KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const LOCK_MS = 60_000;
const WAIT_MS = 15_000;

export interface StoredResponse {
  status: number;
  body: unknown;
}

export function validateIdempotencyKey(key: string): void {
  if (!KEY_PATTERN.test(key))
    throw errors.invalidRequest('Idempotency-Key must be 1 to 64 characters of A-Z, a-z, 0-9, "_" or "-".', { header: 'Idempotency-Key' });
}

export function requestHash(operation: string, input: unknown): string {
  return createHash('sha256').update(operation).update('\0').update(stableJson(input)).digest('hex');
}

function stableJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`)
    .join(',')}}`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `execute` at most once per (workspace, key). Returns the response and whether it was
 * a replay. Answers that must not be pinned to the key (5xx, 429) release the claim so a
 * retry can run again.
 */
export async function withIdempotency(
  workspaceId: string,
  key: string,
  operation: string,
  hash: string,
  execute: () => Promise<StoredResponse>,
  opts: { encryptBody?: boolean } = {},
): Promise<{ response: StoredResponse; replayed: boolean }> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const windowStart = new Date(Date.now() - config.idempotencyWindowMs);
    // Expired rows are dead: the key is free again after the 24 h window.
    await IdempotencyKey.forWorkspace(workspaceId)
      .where('idempotency_keys.key', key)
      .where('idempotency_keys.created_at', '<', windowStart)
      .delete();
    const claimed = await db().raw(
      `insert into idempotency_keys (workspace_id, key, operation, request_hash, state, locked_until)
       values (?, ?, ?, ?, 'in_progress', now() + (? || ' milliseconds')::interval)
       on conflict (workspace_id, key) do update set locked_until = excluded.locked_until, request_hash = excluded.request_hash, operation = excluded.operation
         where idempotency_keys.state = 'in_progress' and idempotency_keys.locked_until < now()
       returning key`,
      [workspaceId, key, operation, hash, String(LOCK_MS)],
    );
    if (claimed.rows.length === 1) {
      let response: StoredResponse;
      try {
        response = await execute();
      } catch (err) {
        if (err instanceof ApiError && err.status < 500 && err.status !== 429) {
          response = {
            status: err.status,
            body: { __error: { status: err.status, code: err.code, message: err.message, details: err.details, headers: err.headers } },
          };
        } else {
          await IdempotencyKey.forWorkspace(workspaceId)
            .where('idempotency_keys.key', key)
            .where('idempotency_keys.state', 'in_progress')
            .delete();
          throw err;
        }
      }
      await IdempotencyKey.forWorkspace(workspaceId)
        .where('idempotency_keys.key', key)
        .patch({
          state: 'done',
          response_status: response.status,
          response_body: JSON.stringify(opts.encryptBody ? { __enc: encrypt(JSON.stringify(response.body)) } : response.body),
          locked_until: null,
        });
      return { response, replayed: false };
    }
    const existing = await IdempotencyKey.forWorkspace(workspaceId).where('idempotency_keys.key', key).first();
    if (!existing) continue;
    if (existing.operation !== operation || existing.request_hash !== hash) throw errors.idempotencyKeyConflict();
    if (existing.state === 'done') return { response: { status: existing.response_status!, body: existing.response_body }, replayed: true };
    if (Date.now() > deadline)
      throw errors.conflict('A request with this Idempotency-Key is still being processed; retry shortly.', { retryable: true });
    await sleep(50);
  }
}

/** Stored error answers are replayed as the same error; encrypted bodies are opened. */
export function unwrapStored(res: StoredResponse): { status: number; body: unknown; error?: ApiError } {
  const sealed = res.body as { __enc?: string } | null;
  if (sealed && typeof sealed === 'object' && typeof sealed.__enc === 'string')
    res = { status: res.status, body: JSON.parse(decrypt(sealed.__enc)) };
  const b = res.body as {
    __error?: {
      status: number;
      code: ApiError['code'];
      message: string;
      details?: Record<string, unknown>;
      headers?: Record<string, string>;
    };
  };
  if (b && typeof b === 'object' && b.__error) {
    const e = b.__error;
    return {
      status: res.status,
      body: null,
      error: new ApiError(e.code, e.message, e.details ?? undefined, e.headers ?? undefined),
    };
  }
  return res;
}
