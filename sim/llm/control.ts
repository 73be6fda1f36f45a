// Typed client for the LLM simulator's control API (`/__sim/*` on sim/llm/server.ts), what
// `bin/admin llm ...` uses to script faults in a simulator running in another process.
// Deliberately free of config imports, like sim/network/control.ts: the caller names the URL.

import type { LlmStubFailure, LlmStubState } from './server';

export type { LlmStubFailure, LlmStubState };

export const LLM_STUB_FAILURES: readonly LlmStubFailure[] = [
  'rate_limited',
  'server_error',
  'bad_request',
  'auth',
  'empty',
  'hang',
  'content_filter',
  'invalid_json',
];

export interface LlmSimulatorControl {
  /** The next `times` chat-completion calls fail with `kind`, after any already queued. */
  fail(kind: LlmStubFailure, times: number): Promise<LlmStubState>;
  /** Delay before every chat-completion answer; 0 removes it. */
  setLatency(ms: number): Promise<LlmStubState>;
  clearFaults(): Promise<LlmStubState>;
  state(): Promise<LlmStubState>;
}

/** `url` is the simulator's base URL, with or without the `/v1` of LLM_BASE_URL. */
export function createLlmSimulatorControl(url: string, opts: { timeoutMs?: number } = {}): LlmSimulatorControl {
  const base = url.replace(/\/+$/, '').replace(/\/v1$/, '');
  async function call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<LlmStubState> {
    let res: Response;
    try {
      res = await fetch(`${base}/__sim/${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(opts.timeoutMs ?? 5_000),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
      throw new Error(
        `cannot reach the LLM simulator at ${base} (${cause}); start it with \`npm run sim:llm\` and point LLM_BASE_URL at it`,
      );
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const message = (parsed as { error?: { message?: string } } | undefined)?.error?.message ?? text.slice(0, 200);
      throw new Error(`LLM simulator at ${base} answered ${res.status}: ${message}`);
    }
    if (!parsed || typeof parsed !== 'object' || !('pendingFailures' in parsed))
      throw new Error(`${base} is not the LLM simulator (no control API)`);
    return parsed as LlmStubState;
  }
  return {
    fail: (kind, times) => call('POST', 'faults', { kind, times }),
    setLatency: (ms) => call('POST', 'latency', { ms }),
    clearFaults: () => call('POST', 'clear-faults', {}),
    state: () => call('GET', 'state'),
  };
}
