import { createHash } from 'node:crypto';
import { config } from '../lib/config';
import { decrypt, encrypt } from '../lib/crypto';
import { afterCommit, unitOfWork } from '../lib/db';
import { ApiError, errors } from '../lib/errors';
import { log } from '../lib/logger';
import { IdempotencyKey } from '../lib/models';
import { crashPoint } from '../lib/crashPoints';
import knex from 'knex';

// spec 8 Idempotency: same key + same body within 24 h replays the first answer; a different
// body is 409 idempotency_key_conflict; two concurrent requests with one key never both run.
//
// The key's claim, the request's writes and the key's answer are one unit of work (lib/db.ts
// unitOfWork), so they commit together or not at all (docs/reliability.md "Idempotency"): a
// process that dies anywhere before the COMMIT leaves neither an effect nor a claim, and a retry
// runs the request for the first time; one that dies after it leaves both, and a retry replays
// the answer. A concurrent request with the same key waits on the claim's uncommitted row (the
// unique index makes its INSERT wait for the first transaction's end), never on a timer; work
// outside the database runs after the COMMIT (`afterCommit`), and what a crash keeps it from
// doing the reconcilers do.

const KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** How long a request waits for a twin with the same key before answering 409 (retryable). */
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

// The claim: a new row, or one whose 24 h window has passed, or a committed `in_progress` claim
// whose lock lapsed (written by a version that claimed keys before running the request, up to a
// rolling deploy; its twins poll it until then, as that version's did).
// Inside the unit's transaction it stays invisible to every other request until the COMMIT.
const CLAIM = `insert into idempotency_keys (workspace_id, key, operation, request_hash, state, locked_until, created_at)
  values (?, ?, ?, ?, 'in_progress', null, now())
  on conflict (workspace_id, key) do update
    set operation = excluded.operation, request_hash = excluded.request_hash, state = 'in_progress',
        locked_until = null, response_status = null, response_body = null, created_at = now()
    where idempotency_keys.created_at < now() - make_interval(secs => ?)
       or (idempotency_keys.state = 'in_progress' and idempotency_keys.locked_until < now())
  returning key`;

type Attempt =
  | { kind: 'answered'; response: StoredResponse }
  | { kind: 'released'; error: ApiError }
  | { kind: 'existing'; row: Pick<IdempotencyKey, 'operation' | 'request_hash' | 'state' | 'response_status' | 'response_body'> };

function storedBody(body: unknown, encrypt_: boolean | undefined): string {
  return JSON.stringify(encrypt_ ? { __enc: encrypt(JSON.stringify(body)) } : body);
}

/**
 * Runs `execute` at most once per (workspace, key), in one unit of work with the key's claim and
 * answer. Returns the response and whether it was a replay. A stored 4xx answer is replayed as
 * the same error; answers that must not be pinned to the key (5xx, 429) leave the key free, and
 * the writes the handler made before refusing stand, as they would without a key.
 */
export async function withIdempotency(
  workspaceId: string,
  key: string,
  operation: string,
  hash: string,
  execute: () => Promise<StoredResponse>,
  opts: { encryptBody?: boolean; /** The operation's name, as crash points name it (lib/crashPoints.ts). */ name?: string } = {},
): Promise<{ response: StoredResponse; replayed: boolean }> {
  const deadline = Date.now() + WAIT_MS;
  const windowSeconds = config.idempotencyWindowMs / 1000;
  for (;;) {
    let attempt: { value: Attempt; later?: () => Promise<unknown> };
    try {
      attempt = await unitOfWork(
        async (trx): Promise<Attempt> => {
          const claimed = await trx
            .raw(CLAIM, [workspaceId, key, operation, hash, windowSeconds])
            // A twin in flight holds the row: wait for its end, up to the deadline.
            .timeout(Math.max(deadline - Date.now(), 1), { cancel: true });
          if (claimed.rows.length === 0) {
            const row = await IdempotencyKey.forWorkspace(workspaceId, trx)
              .where('idempotency_keys.key', key)
              .select('operation', 'request_hash', 'state', 'response_status', 'response_body')
              .first();
            if (!row) throw new Error('idempotency key neither claimed nor found');
            return { kind: 'existing', row };
          }
          crashPoint(opts.name ?? operation, 'claimed');
          // Runs first of the work after the COMMIT.
          void afterCommit(async () => crashPoint(opts.name ?? operation, 'committed'));
          let response: StoredResponse;
          try {
            response = await execute();
          } catch (err) {
            if (!(err instanceof ApiError)) throw err;
            if (err.status >= 500 || err.status === 429) {
              await IdempotencyKey.forWorkspace(workspaceId, trx).where('idempotency_keys.key', key).delete();
              return { kind: 'released', error: err };
            }
            response = {
              status: err.status,
              body: { __error: { status: err.status, code: err.code, message: err.message, details: err.details, headers: err.headers } },
            };
          }
          await IdempotencyKey.forWorkspace(workspaceId, trx)
            .where('idempotency_keys.key', key)
            .patch({ state: 'done', response_status: response.status, response_body: storedBody(response.body, opts.encryptBody) });
          crashPoint(opts.name ?? operation, 'answered');
          return { kind: 'answered', response };
        },
        (err) => log.warn('work after an idempotent write deferred to the reconciler', { operation, err }),
      );
    } catch (err) {
      if (err instanceof knex.KnexTimeoutError)
        throw errors.conflict('A request with this Idempotency-Key is still being processed; retry shortly.', { retryable: true });
      throw err;
    }
    const { value } = attempt;
    if (value.kind === 'released') throw value.error;
    if (value.kind === 'answered') {
      const response = await finalAnswer(workspaceId, key, value.response, attempt.later, opts);
      crashPoint(opts.name ?? operation, 'responded');
      return { response, replayed: false };
    }
    const existing = value.row;
    if (existing.operation !== operation || existing.request_hash !== hash) throw errors.idempotencyKeyConflict();
    if (existing.state === 'done') return { response: { status: existing.response_status!, body: existing.response_body }, replayed: true };
    // A committed claim of the previous version still locked (see CLAIM): poll until it lapses or answers.
    if (Date.now() > deadline)
      throw errors.conflict('A request with this Idempotency-Key is still being processed; retry shortly.', { retryable: true });
    await sleep(50);
  }
}

/**
 * A write that waits for its own work after the COMMIT (spec 4.4 `wait_for_completion_ms`,
 * lib/db.ts answerAfterCommit) answered the work as it stood at the COMMIT, and that answer is
 * stored; the later answer replaces it once known. A retry in between replays the stored one,
 * which is the answer of a request without the wait.
 */
async function finalAnswer(
  workspaceId: string,
  key: string,
  stored: StoredResponse,
  later: (() => Promise<unknown>) | undefined,
  opts: { encryptBody?: boolean },
): Promise<StoredResponse> {
  if (!later || stored.status !== 200) return stored;
  let body: unknown;
  try {
    body = await later();
  } catch (err) {
    log.warn('the wait after an idempotent write failed; answering the stored answer', { key, err });
    return stored;
  }
  const response = { status: stored.status, body };
  await IdempotencyKey.forWorkspace(workspaceId)
    .where('idempotency_keys.key', key)
    .patch({ response_body: storedBody(body, opts.encryptBody) })
    .catch((err: unknown) => log.warn('the later answer of an idempotent write was not stored', { key, err }));
  return response;
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
