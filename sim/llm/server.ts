// A local OpenAI-compatible chat-completions server for development and tests. It is a real
// HTTP server, so the client's whole path (serialization, headers, status handling, timeouts,
// connection errors) is exercised, and faults can be injected per call.
//
// Default answers are deterministic posts built from the source found in the user message, so
// the service behaves plausibly end to end without a key or a network.

import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { composePost } from '../../lib/llm/builtin';
import { builtinInsights, INSIGHTS_PROMPT_MARKER } from '../../lib/llm/insights';
import { parsePromptFields } from '../../lib/llm/prompts';
import { LLM_STUB_FAILURES } from './control';
import { renderQuoteCard } from '../../lib/media/render';

export type LlmStubFailure =
  | 'rate_limited'
  | 'server_error'
  | 'bad_request'
  | 'auth'
  | 'empty'
  | 'hang'
  /** 200 with `finish_reason: "content_filter"` and no content. */
  | 'content_filter'
  /** 200 with a body that is not JSON, as a misbehaving proxy would send. */
  | 'invalid_json';

export interface LlmStubRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body; null when absent or not JSON. */
  body: unknown;
  rawBody: string;
  receivedAt: number;
}

export interface LlmStubUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface LlmStub {
  /** Base URL including `/v1`, ready for LLM_BASE_URL. */
  url: string;
  close(): Promise<void>;
  requests: LlmStubRequest[];
  /** The next `n` chat-completion calls fail with `kind` (queued after any pending failures). */
  failNext(n: number, kind: LlmStubFailure): void;
  /** Delay before every chat-completion answer. */
  setLatency(ms: number): void;
  /** Fixed reply text for every call; null returns to the derived default. */
  setReply(text: string | null): void;
  /** Fixed usage numbers for every call; null returns to the length-based estimate. */
  setUsage(usage: LlmStubUsage | null): void;
  /** Drops queued failures and latency, releases hung calls; requests and replies stay. */
  clearFaults(): void;
  /** What the control API's GET /__sim/state answers. */
  state(): LlmStubState;
  /** Clears requests, queued failures, latency, reply and usage; releases hung calls. */
  reset(): void;
}

export interface LlmStubState {
  /** Failures still queued for the next chat-completion calls, in order. */
  pendingFailures: LlmStubFailure[];
  latencyMs: number;
  /** Chat-completion calls answered so far (successful or not). */
  completions: number;
  /** Every request received, control calls excluded. */
  requests: number;
}

export interface LlmStubOptions {
  port?: number;
  host?: string;
  /** When set, every /v1 call must carry `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Model listed by GET /v1/models. */
  model?: string;
}

const MAX_BODY_BYTES = 5 * 1024 * 1024;

export async function startLlmStub(opts: LlmStubOptions = {}): Promise<LlmStub> {
  const host = opts.host ?? '127.0.0.1';
  const listedModel = opts.model ?? 'stub-model';
  const requests: LlmStubRequest[] = [];
  const failures: LlmStubFailure[] = [];
  const hung = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  let latencyMs = 0;
  let reply: string | null = null;
  let usageOverride: LlmStubUsage | null = null;
  let counter = 0;
  let completions = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, 'server_error', null, `Stub failure: ${String(err)}`);
      else res.destroy();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBody = await readBody(req);
    if (rawBody === null) {
      sendError(res, 413, 'invalid_request_error', 'request_too_large', 'Request body too large.');
      return;
    }
    const path = new URL(req.url ?? '/', 'http://stub').pathname.replace(/\/+$/, '') || '/';
    let body: unknown = null;
    try {
      body = rawBody ? JSON.parse(rawBody) : null;
    } catch {
      body = null;
    }
    if (path.startsWith('/__sim/')) {
      control(req.method ?? 'GET', path, body, res);
      return;
    }
    requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body, rawBody, receivedAt: Date.now() });

    if (path.startsWith('/v1') && opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      sendError(res, 401, 'invalid_request_error', 'invalid_api_key', 'Incorrect API key provided.');
      return;
    }
    if (req.method === 'GET' && path === '/v1/models') {
      sendJson(res, 200, { object: 'list', data: [{ id: listedModel, object: 'model', created: 0, owned_by: 'llm-stub' }] });
      return;
    }
    if (path === '/v1/chat/completions') {
      if (req.method !== 'POST') {
        sendError(res, 405, 'invalid_request_error', 'method_not_allowed', 'Use POST.');
        return;
      }
      await chatCompletion(res, rawBody, body);
      return;
    }
    if (path === '/v1/images/generations' && req.method === 'POST') {
      await imageGeneration(res, body);
      return;
    }
    sendError(res, 404, 'invalid_request_error', 'unknown_url', `Unknown request URL: ${req.method} ${path}.`);
  }

  // The control API (`/__sim/*`, like the network simulator's), so another process (bin/admin
  // llm ...) can script faults. Loopback-only by default (sim/llm/main.ts), like the stub itself.
  function control(method: string, path: string, body: unknown, res: ServerResponse): void {
    const b = isRecord(body) ? body : {};
    if (method === 'GET' && path === '/__sim/state') return sendJson(res, 200, stub.state());
    if (method === 'POST' && path === '/__sim/faults') {
      const times = b.times ?? 1;
      if (
        !(LLM_STUB_FAILURES as readonly unknown[]).includes(b.kind) ||
        !Number.isInteger(times) ||
        (times as number) < 1 ||
        (times as number) > 10_000
      ) {
        return sendError(
          res,
          400,
          'invalid_request_error',
          null,
          `kind must be one of ${LLM_STUB_FAILURES.join(', ')}; times a whole number from 1 to 10000`,
        );
      }
      stub.failNext(times as number, b.kind as LlmStubFailure);
      return sendJson(res, 200, stub.state());
    }
    if (method === 'POST' && path === '/__sim/latency') {
      if (!Number.isInteger(b.ms) || (b.ms as number) < 0 || (b.ms as number) > 600_000)
        return sendError(res, 400, 'invalid_request_error', null, 'ms must be a whole number from 0 to 600000');
      stub.setLatency(b.ms as number);
      return sendJson(res, 200, stub.state());
    }
    if (method === 'POST' && path === '/__sim/clear-faults') {
      stub.clearFaults();
      return sendJson(res, 200, stub.state());
    }
    sendError(res, 404, 'invalid_request_error', 'unknown_url', `Unknown control URL: ${method} ${path}.`);
  }

  /**
   * OpenAI images API (`POST /v1/images/generations`, `response_format: b64_json`): a
   * deterministic PNG of the prompt (the service's own card renderer on a fixed palette), so a
   * test can tell a stub image from the built-in renderer's by its bytes.
   */
  async function imageGeneration(res: ServerResponse, body: unknown): Promise<void> {
    if (!isRecord(body) || typeof body.prompt !== 'string' || body.prompt.trim() === '') {
      sendError(res, 400, 'invalid_request_error', 'missing_required_parameter', "Missing required parameter: 'prompt'.");
      return;
    }
    if (body.response_format !== undefined && body.response_format !== 'b64_json') {
      sendError(res, 400, 'invalid_request_error', 'invalid_value', 'Only response_format b64_json is supported by the stub.');
      return;
    }
    const png = await renderQuoteCard({
      text: body.prompt,
      projectId: 'llm-stub-images',
      caption: typeof body.model === 'string' ? body.model : undefined,
    });
    counter += 1;
    sendJson(res, 200, {
      created: Math.floor(Date.now() / 1000),
      data: [{ b64_json: png.toString('base64'), revised_prompt: body.prompt }],
    });
  }

  async function chatCompletion(res: ServerResponse, rawBody: string, body: unknown): Promise<void> {
    completions += 1;
    const failure = failures.shift();
    if (failure === 'hang') {
      // Never answered; held so close() and reset() can release the client.
      hung.add(res);
      res.on('close', () => hung.delete(res));
      return;
    }
    if (latencyMs > 0) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, latencyMs);
        // The response, not the socket: keep-alive sockets outlive many requests.
        res.once('close', () => {
          clearTimeout(t);
          resolve();
        });
      });
      if (res.destroyed) return;
    }
    switch (failure) {
      case 'rate_limited':
        res.setHeader('retry-after', '1');
        sendError(res, 429, 'requests', 'rate_limit_exceeded', 'Rate limit reached for requests. Please try again in 1s.');
        return;
      case 'server_error':
        sendError(res, 500, 'server_error', null, 'The server had an error while processing your request.');
        return;
      case 'bad_request':
        sendError(res, 400, 'invalid_request_error', 'invalid_value', "Invalid value for 'messages'.");
        return;
      case 'auth':
        sendError(res, 401, 'invalid_request_error', 'invalid_api_key', 'Incorrect API key provided.');
        return;
      case 'invalid_json':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"id": "chatcmpl-broken", "choices": [');
        return;
      default:
        break;
    }

    if (!isRecord(body)) {
      sendError(
        res,
        400,
        'invalid_request_error',
        null,
        rawBody ? 'We could not parse the JSON body of your request.' : 'Missing request body.',
      );
      return;
    }
    const model = body.model;
    const messages = body.messages;
    if (typeof model !== 'string' || model === '') {
      sendError(res, 400, 'invalid_request_error', 'missing_required_parameter', "Missing required parameter: 'model'.");
      return;
    }
    if (!Array.isArray(messages) || messages.length === 0) {
      sendError(res, 400, 'invalid_request_error', 'missing_required_parameter', "Missing required parameter: 'messages'.");
      return;
    }

    const promptText = messages.map((m) => (isRecord(m) ? textOf(m.content) : '')).join('\n');
    let content: string | null;
    let finishReason = 'stop';
    if (failure === 'empty') content = '';
    else if (failure === 'content_filter') {
      content = null;
      finishReason = 'content_filter';
    } else content = reply ?? defaultReply(messages);

    const usage = usageOverride ?? {
      prompt_tokens: Math.ceil(promptText.length / 4),
      completion_tokens: Math.ceil((content ?? '').length / 4),
    };
    counter += 1;
    sendJson(res, 200, {
      id: `chatcmpl-stub-${counter}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finishReason }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    });
  }

  function releaseHung(): void {
    for (const res of hung) res.destroy();
    hung.clear();
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;

  const stub: LlmStub = {
    url: `http://${urlHost}:${port}/v1`,
    requests,
    failNext(n, kind) {
      for (let i = 0; i < n; i++) failures.push(kind);
    },
    setLatency(ms) {
      latencyMs = Math.max(0, ms);
    },
    setReply(text) {
      reply = text;
    },
    clearFaults() {
      failures.length = 0;
      latencyMs = 0;
      releaseHung();
    },
    state() {
      return { pendingFailures: [...failures], latencyMs, completions, requests: requests.length };
    },
    setUsage(usage) {
      usageOverride = usage;
    },
    reset() {
      requests.length = 0;
      failures.length = 0;
      latencyMs = 0;
      reply = null;
      usageOverride = null;
      releaseHung();
    },
    close() {
      releaseHung();
      return new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Keep-alive sockets would otherwise hold close() open until they time out.
        for (const s of sockets) s.destroy();
      });
    },
  };
  return stub;
}

/** A post derived from the last user message, so different sources get different answers. */
function defaultReply(messages: unknown[]): string {
  // Topics and hooks of a source (lib/llm/insights.ts): the built-in extractor's JSON.
  const system = messages.find((m) => isRecord(m) && m.role === 'system');
  if (isRecord(system) && textOf(system.content).includes(INSIGHTS_PROMPT_MARKER)) {
    const userText = [...messages].reverse().find((m) => isRecord(m) && m.role === 'user');
    const source = isRecord(userText) ? textOf(userText.content).replace(/^[\s\S]*?\nSource:\n/, '') : '';
    return JSON.stringify(builtinInsights(source));
  }
  const user = [...messages].reverse().find((m) => isRecord(m) && m.role === 'user');
  const text = isRecord(user) ? textOf(user.content) : '';
  const fields = parsePromptFields(text);
  const sourceText = fields.sourceText?.trim() ? fields.sourceText : text.trim() || 'Nothing to say yet.';
  return composePost({
    sourceText,
    language: fields.language ?? 'en',
    contentType: fields.contentType ?? 'UNKNOWN',
    ...(fields.knowledge ? { knowledge: fields.knowledge } : {}),
  });
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (isRecord(p) && typeof p.text === 'string' ? p.text : '')).join('');
  return '';
}

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(c);
    });
    req.on('end', () => resolve(tooLarge ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, payload: unknown): void {
  const body = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function sendError(res: ServerResponse, status: number, type: string, code: string | null, message: string): void {
  sendJson(res, status, { error: { message, type, param: null, code } });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
