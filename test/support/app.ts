import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type Koa from 'koa';
import { createApp } from '../../api/app';
import type { ApiDeps } from '../../api/deps';
import { listen, type Door } from '../../api/listen';
import { apiClient, type ApiClient } from '../../client';
import { enforceContract } from './contract';

// The real Koa app over real HTTP on an ephemeral port.
export interface TestServer {
  url: string;
  close(): Promise<void>;
}

/**
 * The in-process API for the enclosing `describe` block: started in its `before` hook and closed
 * in its `after` hook (registered where this is called, so later hooks can use it).
 */
export function useApi(deps?: ApiDeps): TestServer {
  const api = {} as TestServer;
  before(async () => {
    Object.assign(api, await startApi(deps));
  });
  after(async () => {
    await api.close();
  });
  return api;
}

/** `deps`: the app's outside-world clients (api/deps.ts); the configured ones when omitted. */
export function startApi(deps?: ApiDeps): Promise<TestServer> {
  return serveOnEphemeralPort(createApp(deps));
}

/**
 * A Koa app of the API on an ephemeral loopback port, set up as api/main.ts sets up its
 * listeners (api/listen.ts): the same timeouts, request-head limit and parser-refusal answer.
 */
export async function serveOnEphemeralPort(app: Koa, door: Door = 'rest'): Promise<TestServer & { server: Server }> {
  const server = await listen(app, { door, port: 0, host: '127.0.0.1' });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface CallResult<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export function client(baseUrl: string, token?: string, defaults: Record<string, string> = {}) {
  return async function call<T = any>(
    method: string,
    path: string,
    opts: { body?: unknown; headers?: Record<string, string>; raw?: string } = {},
  ): Promise<CallResult<T>> {
    const headers: Record<string, string> = { ...defaults, ...opts.headers };
    if (token && !('authorization' in Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]))))
      headers.Authorization = `Bearer ${token}`;
    let body: string | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['Content-Type'] = 'application/json';
    }
    const res = await fetch(baseUrl + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* leave as text */
    }
    // Every response is checked against the published OpenAPI document (./contract.ts).
    enforceContract(method, baseUrl + path, res.status, res.headers.get('content-type'), parsed);
    return { status: res.status, body: parsed as T, headers: res.headers };
  };
}

/** A caller for fixture set-up: every request must answer 200; returns the envelope's `data`. */
export function dataClient(baseUrl: string, token: string) {
  const call = client(baseUrl, token);
  return async (method: string, path: string, body: unknown): Promise<any> => {
    const res = await call(method, path, { body });
    assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
    return res.body.data;
  };
}

/**
 * The typed client (client/index.ts, generated from the OpenAPI document) as a caller uses it,
 * with the same contract check as `client` on every response it receives.
 */
export function typedClient(baseUrl: string, token?: string): ApiClient {
  const api = apiClient(baseUrl, token);
  api.use({
    async onResponse({ request, response }) {
      const text = await response.clone().text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        /* leave as text */
      }
      enforceContract(request.method, request.url, response.status, response.headers.get('content-type'), parsed);
      return undefined;
    },
  });
  return api;
}

/** The parameters of a Bearer challenge (RFC 6750 section 3), asserting the header is one. */
export function challengeParams(header: string | null): Record<string, string> {
  assert.ok(header, 'no WWW-Authenticate header');
  assert.match(header, /^Bearer /);
  return Object.fromEntries([...header.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}
