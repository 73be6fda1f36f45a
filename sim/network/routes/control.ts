// The control API (docs/network-protocol.md, "Control API"): the in-process SimulatorControl,
// and `/__sim/*` as a thin JSON adapter over it, so both answer alike.

import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  SimulatorControlError,
  type ExpireTokenInput,
  type FaultInput,
  type IssueTokenInput,
  type LatencyInput,
  type RevokeTokenInput,
  type SeedPostsInput,
  type SimPostMetrics,
  type SimulatorControl,
} from '../control';
import { addFault, latencySettings, setLatency } from '../faults';
import { readBody, send } from '../responses';
import { invalid, toSimPost, type SimState } from '../state';
import type { SimContext } from './common';

/** `ctx` with its state replaceable: what reset() needs. */
export interface ResettableContext extends SimContext {
  state: SimState;
}

export function buildControl(ctx: ResettableContext, newState: () => SimState): SimulatorControl {
  const s = () => ctx.state;
  // Async on purpose: the in-process control has exactly the signatures of the HTTP one.
  return {
    health: async () => ({ ok: true as const }),
    issueToken: async (input) => s().issueToken(input),
    revokeToken: async (input) => s().revokeToken(input),
    expireToken: async (input) => s().expireToken(input),
    setOrganizationAdmins: async (orgId, personIds) => s().setOrganizationAdmins(orgId, personIds),
    getOrganizationAdmins: async (orgId) => s().getOrganizationAdmins(orgId),
    addFault: async (input) => addFault(s(), input),
    listFaults: async () => s().faults.map((f) => ({ ...f })),
    clearFaults: async () => {
      s().faults = [];
    },
    setLatency: async (input) => setLatency(s(), input),
    getLatency: async () => latencySettings(s()),
    listPosts: async (filter) => s().listPosts(filter ?? {}),
    getPost: async (urn) => {
      const p = s().postsByUrn.get(urn);
      return p ? toSimPost(p) : null;
    },
    setPostMetrics: async (urn, metrics) => s().setPostMetrics(urn, metrics),
    seedPosts: async (input) => s().seedPosts(input),
    counts: async () => s().countsSnapshot(),
    reset: async () => {
      ctx.state = newState();
    },
    // planning
    setMetricsGrowth: async (input) => {
      try {
        return ctx.growth.set(input);
      } catch (err) {
        throw invalid((err as Error).message);
      }
    },
    addViralPosts: async (posts) => {
      try {
        return ctx.viral.add(posts);
      } catch (err) {
        throw invalid((err as Error).message);
      }
    },
    // engagement
    listEngagement: async (postUrn) => s().engagement.of(postUrn),
  };
}

function sendControlError(res: ServerResponse, err: SimulatorControlError): void {
  send(res, { status: err.status, body: { error: { code: err.code, message: err.message } } });
}

/** The control API over HTTP: a thin JSON adapter over `c`. */
export async function handleControl(c: SimulatorControl, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const method = req.method ?? 'GET';
  const path = url.pathname.slice('/__sim'.length);
  const raw = await readBody(req);
  if (raw === null) return sendControlError(res, new SimulatorControlError(413, 'too_large', 'body too large'));
  let body: unknown = {};
  if (raw.length > 0) {
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return sendControlError(res, invalid('body must be JSON'));
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      return sendControlError(res, invalid('body must be a JSON object'));
  }
  const q = url.searchParams;
  const intParam = (name: string): number | undefined => {
    const v = q.get(name);
    if (v === null) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n)) throw invalid(`${name} must be an integer`);
    return n;
  };
  try {
    let result: unknown;
    let m: RegExpExecArray | null;
    if (path === '/health' && method === 'GET') result = await c.health();
    else if (path === '/tokens' && method === 'POST') result = await c.issueToken(body as IssueTokenInput);
    else if (path === '/tokens/revoke' && method === 'POST') result = await c.revokeToken(body as RevokeTokenInput);
    else if (path === '/tokens/expire' && method === 'POST') result = await c.expireToken(body as ExpireTokenInput);
    else if ((m = /^\/organizations\/([^/]+)\/admins$/.exec(path)) && (method === 'GET' || method === 'PUT')) {
      const orgId = decodeURIComponent(m[1]!);
      result =
        method === 'GET'
          ? await c.getOrganizationAdmins(orgId)
          : await c.setOrganizationAdmins(orgId, (body as { personIds?: string[] }).personIds as string[]);
    } else if (path === '/faults' && method === 'GET') result = { faults: await c.listFaults() };
    else if (path === '/faults' && method === 'POST') result = await c.addFault(body as FaultInput);
    else if (path === '/faults' && method === 'DELETE') {
      await c.clearFaults();
      result = { ok: true };
    } else if (path === '/latency' && method === 'GET') result = await c.getLatency();
    else if (path === '/latency' && method === 'PUT') result = await c.setLatency(body as LatencyInput);
    else if (path === '/posts' && method === 'GET') {
      result = await c.listPosts({
        author: q.get('author') ?? undefined,
        reference: q.get('reference') ?? undefined,
        limit: intParam('limit'),
        offset: intParam('offset'),
      });
    } else if ((m = /^\/posts\/([^/]+)\/metrics$/.exec(path)) && method === 'PUT') {
      result = await c.setPostMetrics(decodeURIComponent(m[1]!), body as Partial<SimPostMetrics>);
    } else if ((m = /^\/posts\/([^/]+)$/.exec(path)) && method === 'GET') {
      const post = await c.getPost(decodeURIComponent(m[1]!));
      if (!post) throw new SimulatorControlError(404, 'not_found', 'no such post');
      result = post;
    } else if (path === '/posts/seed' && method === 'POST') result = await c.seedPosts(body as SeedPostsInput);
    else if (path === '/counts' && method === 'GET') result = await c.counts();
    // planning: metrics growth and the viral-post corpus
    else if (path === '/metrics-growth' && method === 'PUT') result = await c.setMetricsGrowth(body as never);
    else if (path === '/viral-posts' && method === 'POST') result = await c.addViralPosts((body as { posts?: never })?.posts as never);
    // engagement
    else if ((m = /^\/engagement\/([^/]+)$/.exec(path)) && method === 'GET') result = await c.listEngagement(decodeURIComponent(m[1]!));
    else if (path === '/reset' && method === 'POST') {
      await c.reset();
      result = { ok: true };
    } else throw new SimulatorControlError(404, 'not_found', `${method} /__sim${path} is not a control route`);
    send(res, { status: 200, body: result });
  } catch (err) {
    if (err instanceof SimulatorControlError) return sendControlError(res, err);
    if (err instanceof URIError) return sendControlError(res, invalid('malformed percent-encoding in path'));
    throw err;
  }
}
