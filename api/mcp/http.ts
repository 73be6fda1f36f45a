import type { ServerResponse } from 'node:http';
import type { Context, Next } from 'koa';
import { config } from '../../lib/config';
import { readBodyText } from '../rawBody';
import { ParseError } from './errors';

// Koa ⇄ SDK plumbing. The SDK's transports speak web-standard Request/Response (streamable
// HTTP) or write to the Node response themselves (legacy SSE); Koa steps aside for both with
// ctx.respond = false once a request has been authenticated.

/**
 * The bound for a message body: the SDK's own 4 MiB, or what an inline file of spec 8's 25 MB
 * (decoded) takes as base64 plus room for the rest of the call, whichever is larger (spec 4.9:
 * create_source_file and add_to_knowledge_base take files inline).
 */
export const MAX_MESSAGE_BYTES = Math.max(4 * 1024 * 1024, Math.ceil(config.media.mcpInlineMaxBytes / 3) * 4 + 64 * 1024);

/** Reads a JSON body into ctx.state.message (undefined when empty); malformed JSON is a 400. */
export async function readJsonBody(ctx: Context, next: Next): Promise<void> {
  if (ctx.method !== 'POST') return next();
  const text = await readBodyText(ctx, MAX_MESSAGE_BYTES, 'message');
  if (text.trim() !== '') {
    try {
      ctx.state.message = JSON.parse(text);
    } catch {
      throw new ParseError();
    }
  }
  return next();
}

/** The JSON-RPC messages of a body (a single message or a batch). */
export function messagesOf(body: unknown): Array<Record<string, unknown>> {
  const list = Array.isArray(body) ? body : body === undefined ? [] : [body];
  return list.filter((m): m is Record<string, unknown> => typeof m === 'object' && m !== null);
}

/** A web Request mirroring the Koa request (the body, already read, goes to the SDK parsed). */
export function webRequestOf(ctx: Context, base: string): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(ctx.req.headers)) {
    if (v === undefined || k === 'content-length' || k === 'transfer-encoding' || k === 'connection') continue;
    headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  }
  return new Request(new URL(ctx.originalUrl, base), { method: ctx.method, headers });
}

/**
 * Streams a web Response to the Node response as it is produced (SSE events must not wait
 * for the end of the stream). A client that goes away cancels the stream, which is how the
 * SDK learns that a stream closed.
 */
export async function sendWebResponse(res: ServerResponse, response: Response, extraHeaders: Record<string, string> = {}): Promise<void> {
  const headers: Record<string, string> = { ...extraHeaders };
  response.headers.forEach((v, k) => {
    headers[k] = v;
  });
  // spec 2.2: an authenticated answer is never stored by a cache (the SDK's SSE streams say
  // no-cache; its JSON answers say nothing).
  headers['cache-control'] = 'no-store';
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  const cancel = () => {
    reader.cancel().catch(() => {});
  };
  res.once('close', cancel);
  // Headers leave with the first event when it is already there (one write instead of two);
  // a stream with nothing to say yet (the GET stream) gets its headers at once, so that the
  // client knows it is open.
  let pending: ReturnType<typeof reader.read> | null = reader.read();
  try {
    const first = await Promise.race([pending, new Promise<null>((r) => setImmediate(() => r(null)))]);
    if (first === null) res.flushHeaders();
    for (;;) {
      const { done, value } = await (pending ?? reader.read());
      pending = null;
      if (done) break;
      // An event and the end of its stream usually come in the same turn (a tool result closes
      // its request stream): corked until the next turn, they leave in one write.
      res.cork();
      const flowing = res.write(value);
      setImmediate(() => res.uncork());
      if (!flowing)
        await new Promise<void>((resolve) => {
          res.once('drain', resolve);
          res.once('close', resolve);
        });
      if (res.destroyed) break;
    }
  } catch {
    // The stream was cancelled because the client left: nothing to answer.
  } finally {
    res.off('close', cancel);
    if (!res.writableEnded) res.end();
  }
}
