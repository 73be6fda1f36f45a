import { ApiError, errors } from '../../lib/errors';
import { checkScopes, type ScopeRule } from '../../lib/scopes';
import { authenticate, bearerToken, type BearerRequest } from '../auth/authenticate';
import type { AuthContext } from '../auth/context';
import { requestHash, unwrapStored, validateIdempotencyKey, withIdempotency } from '../idempotency';
import type { ApiDeps } from '../deps';
import type { AnyOperation, OperationContext } from '../operation';
import { idempotentReplays, rateLimitRefusals } from '../../lib/metrics';
import { consume, type RateLimitResult } from '../rateLimit';
import { parseInput } from '../validation';
import { resolveVersion, type ApiVersion } from '../versioning';

// The one pipeline of both doors (ARCHITECTURE.md "One operation, three doors"). An operation
// call goes through the same named steps whether it came in as a REST route or an MCP tool:
//
//   version → authenticate → rate limit → plan/role → scopes → validate → idempotency → handler
//
// (in the spirit of node-oidc-provider's endpoint arrays: each step reads and extends one
// state object). A door only says where the pieces come from (`OperationCall`) and writes the
// outcome (`CallState.result`, or the ApiError thrown) in its own wire form.

/** What a door hands to the pipeline. */
export interface OperationCall {
  op: AnyOperation;
  requestId: string;
  /** The Service-Api-Version header as sent (REST), or … */
  versionHeader?: string;
  /** … the version the transport already resolved for the whole HTTP request (MCP). */
  apiVersion?: ApiVersion;
  /** Who is calling: REST reads the Authorization header, MCP hands over the request's authentication. */
  authenticate: () => Promise<AuthContext>;
  /** The raw input as the door extracted it (path parameters merged in). */
  input: () => Record<string, unknown>;
  /** Idempotency-Key (header or tool argument); undefined when none was sent. */
  idempotencyKey?: string;
  /**
   * The operation string stored with the key and the subject of the request hash. Keys live in
   * the workspace's one key space; a different string per door keeps a key used on REST from
   * replaying a tool's answer (a reuse across doors is a conflict, not a replay).
   */
  idempotencyScope: { operation: string; hashSubject: string };
  /**
   * What the door requires beyond the operation's own rule (an MCP tool's spec 4.9 scope), or
   * instead of it when `replace` is set (generate_post: posts:generate where REST needs posts:write).
   */
  doorScopes?: { rule: ScopeRule; replace?: boolean };
  /** Fills what the door can default before validation (the MCP default project). */
  prepare?: (auth: AuthContext, raw: Record<string, unknown>) => Promise<void>;
  /** The app's outside-world clients (api/deps.ts), handed to the handler. */
  deps?: ApiDeps;
}

export interface CallResult {
  status: number;
  body: unknown;
  replayed: boolean;
}

/** The state the steps hand to each other. */
export interface CallState extends OperationCall {
  version?: ApiVersion;
  auth?: AuthContext;
  /** The workspace bucket consumed by this call (REST writes its X-RateLimit-* headers from it). */
  rateLimit?: RateLimitResult;
  raw?: Record<string, unknown>;
  parsed?: unknown;
  result?: CallResult;
  /** Whether the answer (a stored error included) is a replay; set once idempotency has run. */
  replayed?: boolean;
}

type Step = { name: string; run: (s: CallState) => void | Promise<void> };

const need = <T>(v: T | undefined): T => {
  if (v === undefined) throw errors.internal();
  return v;
};

// ---------------------------------------------------------------------------------------------
// Refusals shared by the doors

/** spec 5.4: a Client-role account may not use this operation. */
export function clientRoleRefusal(): ApiError {
  return errors.forbiddenProject('Client accounts cannot use this operation.', { reason: 'client_role' });
}

/** spec 5.4: `deny` operations are closed to the client view whatever the scopes. */
export function refuseClientRole(op: AnyOperation, auth: AuthContext): void {
  if (auth.role === 'client' && op.clientRole === 'deny') throw clientRoleRefusal();
}

export function operationScopes(op: AnyOperation, version: ApiVersion): ScopeRule {
  return typeof op.scopes === 'function' ? op.scopes(version) : op.scopes;
}

/** The rules a call must satisfy, in the order they are checked. */
export function scopeRules(op: AnyOperation, version: ApiVersion, door?: OperationCall['doorScopes']): ScopeRule[] {
  if (!door) return [operationScopes(op, version)];
  return door.replace ? [door.rule] : [operationScopes(op, version), door.rule];
}

/** spec 7.2 scope_missing, `details.required_scope` when exactly one named scope is missing. */
export function requireScopes(granted: ReadonlySet<string>, rules: readonly ScopeRule[]): void {
  for (const rule of rules) {
    const check = checkScopes(granted, rule);
    if (!check.ok) throw errors.scopeMissing(check.requiredScope);
  }
}

/** Role and scopes of an operation for a caller (plan gating happened at authentication). */
export function authorize(op: AnyOperation, auth: AuthContext, version: ApiVersion, door?: OperationCall['doorScopes']): void {
  refuseClientRole(op, auth);
  requireScopes(auth.scopes, scopeRules(op, version, door));
}

/** spec 8: the workspace's sliding-window bucket; both doors share it. */
export async function limitWorkspace(kind: AnyOperation['kind'], workspaceId: string): Promise<RateLimitResult> {
  const rl = await consume(kind, workspaceId);
  if (!rl.allowed) {
    rateLimitRefusals.inc({ bucket: kind });
    throw errors.rateLimited(rl);
  }
  return rl;
}

/**
 * A bearer credential from an Authorization header (both doors). A failed credential counts
 * against the per-address `unauthenticated` bucket so that guessing keys is slow; once that is
 * spent, the answer is 429 instead of 401.
 */
export async function authenticateBearer(req: {
  authorization: string | undefined;
  targetWorkspaceId: string | undefined;
  resource: BearerRequest['resource'];
  clientAddress: string;
}): Promise<{ auth: AuthContext; token: string }> {
  try {
    const token = bearerToken(req.authorization);
    return { auth: await authenticate({ token, targetWorkspaceId: req.targetWorkspaceId, resource: req.resource }), token };
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      const rl = await consume('unauthenticated', req.clientAddress);
      if (!rl.allowed) {
        rateLimitRefusals.inc({ bucket: 'unauthenticated' });
        throw errors.rateLimited(rl, `Too many failed credentials; retry in ${rl.retryAfter} s.`);
      }
    }
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// The steps

const version: Step = {
  name: 'version',
  run: (s) => {
    s.version = s.apiVersion ?? resolveVersion(s.versionHeader);
  },
};

const authenticateStep: Step = {
  name: 'authenticate',
  run: async (s) => {
    s.auth = await s.authenticate();
  },
};

const rateLimit: Step = {
  name: 'rate limit',
  run: async (s) => {
    s.rateLimit = await limitWorkspace(s.op.kind, need(s.auth).workspaceId);
  },
};

// spec 1 rule 2 (plan) is part of authentication, which knows which plan gates the principal
// (spec 5.5); the client-role view of spec 5.4 is checked here.
const planAndRole: Step = {
  name: 'plan/role',
  run: (s) => refuseClientRole(s.op, need(s.auth)),
};

const scopes: Step = { name: 'scopes', run: (s) => requireScopes(need(s.auth).scopes, scopeRules(s.op, need(s.version), s.doorScopes)) };

function parseRaw(s: CallState, raw: Record<string, unknown>): void {
  s.raw = raw;
  s.parsed = parseInput(s.op.input, raw, s.op.inputSource);
}

// spec 7.2, one rule for both doors: an input that does not parse (an unknown argument included)
// is refused by where the operation's input comes from on REST, whichever door it came in by:
// a query-string operation (every read) answers 400 invalid_request, a body operation (every
// write) 422 unprocessable; `apiCode` issues (413, bad_pagination) and a missing `projectId` or
// source (400) are the spec's named exceptions (api/validation.ts). So an MCP tool answers what
// its REST twin answers for the same input.
// Asynchronous only when the door prepares the input (runOperation awaits only promises).
const validate: Step = {
  name: 'validate',
  run: (s) => {
    // spec 8: a key that is sent is 1 to 64 characters of A-Za-z0-9_-, an empty one included;
    // refused before anything runs.
    if (s.idempotencyKey !== undefined && s.op.kind === 'write') validateIdempotencyKey(s.idempotencyKey);
    const raw = s.input();
    if (s.prepare) return s.prepare(need(s.auth), raw).then(() => parseRaw(s, raw));
    parseRaw(s, raw);
  },
};

function invoke(s: CallState): Promise<unknown> {
  const ctx: OperationContext = { auth: need(s.auth), requestId: s.requestId, apiVersion: need(s.version), deps: s.deps };
  return s.op.handler(ctx, s.parsed);
}

// Reads and keyless writes pass without a promise (runOperation awaits only promises).
const idempotency: Step = {
  name: 'idempotency',
  run: (s) => (s.op.kind === 'write' && s.idempotencyKey !== undefined ? runIdempotent(s, s.idempotencyKey) : undefined),
};

async function runIdempotent(s: CallState, key: string): Promise<void> {
  const { response, replayed } = await withIdempotency(
    need(s.auth).workspaceId,
    key,
    s.idempotencyScope.operation,
    requestHash(s.idempotencyScope.hashSubject, s.parsed),
    async () => ({ status: 200, body: await invoke(s) }),
    { encryptBody: s.op.secretResponse, name: s.op.name },
  );
  s.replayed = replayed;
  if (replayed) idempotentReplays.inc({ operation: s.op.name });
  const unwrapped = unwrapStored(response);
  if (unwrapped.error) throw unwrapped.error;
  s.result = { status: unwrapped.status, body: unwrapped.body, replayed };
}

const handler: Step = {
  name: 'handler',
  run: async (s) => {
    if (s.result) return;
    s.replayed = false;
    s.result = { status: 200, body: await invoke(s), replayed: false };
  },
};

/** Every operation that needs a credential. */
export const OPERATION_STEPS: readonly Step[] = [version, authenticateStep, rateLimit, planAndRole, scopes, validate, idempotency, handler];

/** /v1/health: no credential, no workspace, no input. */
const PUBLIC_STEPS: readonly Step[] = [
  version,
  {
    name: 'handler',
    run: async (s) => {
      const ctx = { auth: undefined as unknown as AuthContext, requestId: s.requestId, apiVersion: need(s.version), deps: s.deps };
      s.result = { status: 200, body: await s.op.handler(ctx, {}), replayed: false };
    },
  },
];

/**
 * Runs one operation call through the steps. The state is returned even when a step throws
 * (as `state` on the caller's side, through `onState`), so a door can still write what it
 * learnt before the failure (REST's rate-limit headers).
 */
export async function runOperation(call: OperationCall, onState?: (s: CallState) => void): Promise<CallResult & { state: CallState }> {
  // Copied with Object.assign, not spread: the steps add six properties to the state, and on this
  // Node every property added to an object made by a spread costs microseconds (each copy gets a
  // shape of its own); over the steps that was tens of µs of every call (bench/README.md, reads).
  const state: CallState = Object.assign({}, call);
  onState?.(state);
  // A synchronous step (version, plan/role, scopes) is not awaited: an await costs a promise and
  // a microtask turn per step, on the hottest path of both doors (bench/posts-list.ts).
  for (const step of call.op.public ? PUBLIC_STEPS : OPERATION_STEPS) {
    const pending = step.run(state);
    if (pending instanceof Promise) await pending;
  }
  const { status, body, replayed } = need(state.result);
  return { status, body, replayed, state };
}
