// Faults and latency (docs/network-protocol.md, "Simulator"): what the control API scripts, and
// how a protocol call takes them. Latency delays a call before it is processed; faults are taken
// in the order added, the first matching one answering instead of (transient, permanent) or
// after (lost_response) the handler. Both live in SimState, so reset() clears them.

import {
  SIM_OPERATIONS,
  type Fault,
  type FaultInput,
  type LatencyInput,
  type LatencySettings,
  type SimOperation,
  type SimOperationFilter,
} from './control';
import { oauthError, restError, type ErrorStyle, type SimResponse } from './responses';
import { invalid, optInt, type SimState } from './state';

const TRANSIENT_CODES: Record<number, string> = {
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
};
const PERMANENT_CODES: Record<number, { rest: string; oauth: string }> = {
  400: { rest: 'INVALID_REQUEST', oauth: 'invalid_request' },
  403: { rest: 'ACCESS_DENIED', oauth: 'access_denied' },
  404: { rest: 'NOT_FOUND', oauth: 'invalid_request' },
  409: { rest: 'CONFLICT', oauth: 'invalid_request' },
  422: { rest: 'UNPROCESSABLE_ENTITY', oauth: 'invalid_request' },
};

function checkOperation(v: unknown, fallback: SimOperationFilter): SimOperationFilter {
  if (v === undefined) return fallback;
  if (v === 'any' || (typeof v === 'string' && (SIM_OPERATIONS as readonly string[]).includes(v))) return v as SimOperationFilter;
  throw invalid(`operation must be "any" or one of ${SIM_OPERATIONS.join(', ')}`);
}

export function addFault(s: SimState, input: FaultInput): Fault {
  if (typeof input !== 'object' || input === null) throw invalid('body must be an object');
  const kind = input.kind;
  if (kind !== 'transient' && kind !== 'permanent' && kind !== 'lost_response')
    throw invalid('kind must be transient, permanent or lost_response');
  const times = optInt(input.times, 'times', 1, 1_000_000) ?? 1;
  const fault: Fault = {
    id: `flt_${s.nextFaultId++}`,
    kind,
    operation: checkOperation(input.operation, kind === 'lost_response' ? 'createPost' : 'any'),
    remaining: times,
    status: null,
    retryAfterSeconds: null,
    lostAs: null,
    accessToken: null,
  };
  if (input.accessToken !== undefined) {
    if (typeof input.accessToken !== 'string' || input.accessToken === '') throw invalid('accessToken must be a non-empty string');
    fault.accessToken = input.accessToken;
  }
  if (input.kind === 'transient') {
    const status = input.status ?? 503;
    if (!(status in TRANSIENT_CODES)) throw invalid(`transient status must be one of ${Object.keys(TRANSIENT_CODES).join(', ')}`);
    fault.status = status;
    fault.retryAfterSeconds = optInt(input.retryAfterSeconds, 'retryAfterSeconds', 0, 86_400) ?? null;
  } else if (input.kind === 'permanent') {
    const status = input.status ?? 400;
    if (!(status in PERMANENT_CODES)) throw invalid(`permanent status must be one of ${Object.keys(PERMANENT_CODES).join(', ')}`);
    fault.status = status;
  } else {
    const lostAs = input.lostAs ?? 'socket';
    if (lostAs !== 'socket' && lostAs !== '503') throw invalid('lostAs must be "socket" or "503"');
    fault.lostAs = lostAs;
  }
  s.faults.push(fault);
  return { ...fault };
}

/** The first pending fault for `op` made with `accessToken` (the call's bearer token, if any), counted as triggered and used up by one. */
export function takeFault(s: SimState, op: SimOperation, accessToken: string | null = null): Fault | null {
  const faults = s.faults;
  for (let i = 0; i < faults.length; i++) {
    const f = faults[i]!;
    if (f.operation !== 'any' && f.operation !== op) continue;
    if (f.accessToken !== null && f.accessToken !== accessToken) continue;
    f.remaining--;
    if (f.remaining <= 0) faults.splice(i, 1);
    s.counts.faultsTriggered++;
    return f;
  }
  return null;
}

/** The answer a fault gives in place of the route's, in the route's error style. */
export function faultResponse(fault: Fault, style: ErrorStyle): SimResponse {
  const status = fault.status ?? (fault.kind === 'permanent' ? 400 : 503);
  const headers: Record<string, string> = {};
  if (fault.retryAfterSeconds !== null) headers['retry-after'] = String(fault.retryAfterSeconds);
  const message = `simulated ${fault.kind} failure (fault ${fault.id})`;
  if (fault.kind === 'permanent') {
    const codes = PERMANENT_CODES[status] ?? PERMANENT_CODES[400]!;
    return style === 'oauth' ? oauthError(status, codes.oauth, message, headers) : restError(status, codes.rest, message, headers);
  }
  const code = TRANSIENT_CODES[status] ?? 'SERVICE_UNAVAILABLE';
  return style === 'oauth' ? oauthError(status, 'temporarily_unavailable', message, headers) : restError(status, code, message, headers);
}

export function setLatency(s: SimState, input: LatencyInput): LatencySettings {
  if (typeof input !== 'object' || input === null) throw invalid('body must be an object');
  const ms = optInt(input.ms, 'ms', 0, 600_000);
  if (ms === undefined) throw invalid('ms is required');
  const op = checkOperation(input.operation, 'any');
  if (ms === 0) s.latency.delete(op);
  else s.latency.set(op, ms);
  return latencySettings(s);
}

export function latencySettings(s: SimState): LatencySettings {
  return Object.fromEntries(s.latency) as LatencySettings;
}

export function latencyFor(s: SimState, op: SimOperation): number {
  return s.latency.get(op) ?? s.latency.get('any') ?? 0;
}

/** The delays calls are sleeping through, so close() can end them at once. */
export class Sleepers {
  private readonly sleeps = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.sleeps.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      this.sleeps.add(entry);
    });
  }

  wake(): void {
    for (const s of this.sleeps) {
      clearTimeout(s.timer);
      s.resolve();
    }
    this.sleeps.clear();
  }
}
