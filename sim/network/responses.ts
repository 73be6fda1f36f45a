// The network's answers as values (docs/network-protocol.md, "Common rules"): handlers build a
// SimResponse instead of writing to the socket, so an injected "lost response" can decide after
// the work is done what (if anything) reaches the client (server.ts sends it).

import type { IncomingMessage, ServerResponse } from 'node:http';

export interface SimResponse {
  status: number;
  headers?: Record<string, string>;
  /** Objects are sent as JSON; undefined sends an empty body. */
  body?: unknown;
}

/** Which error body a route answers in: the REST one, or RFC 6749's for the /oauth/v2 endpoints. */
export type ErrorStyle = 'rest' | 'oauth';

export const MAX_BODY_BYTES = 1 << 20;

/** The network's error body for /rest and /v2: `{ status, serviceErrorCode, code, message }`. */
export function restError(status: number, code: string, message: string, headers?: Record<string, string>): SimResponse {
  return { status, headers, body: { status, serviceErrorCode: status, code, message } };
}

/** RFC 6749 section 5.2 error body, used by the /oauth/v2 endpoints. */
export function oauthError(status: number, error: string, description: string, headers?: Record<string, string>): SimResponse {
  return { status, headers, body: { error, error_description: description } };
}

/** A request body that is one JSON object, or null (malformed JSON, or another JSON value). */
export function jsonObjectOf(rawBody: Buffer): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(rawBody.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The request's media type, lower case and without parameters ('' when absent). */
export function mediaTypeOf(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

export function send(res: ServerResponse, r: SimResponse): void {
  if (res.destroyed || res.headersSent) return;
  const payload = r.body === undefined ? '' : JSON.stringify(r.body);
  const headers: Record<string, string | number> = { ...r.headers, 'content-length': Buffer.byteLength(payload) };
  if (r.body !== undefined) headers['content-type'] = 'application/json';
  res.writeHead(r.status, headers);
  res.end(payload);
}

/** The whole request body, or null when it is larger than the limit. */
export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) tooLarge = true;
    else chunks.push(chunk);
  }
  return tooLarge ? null : Buffer.concat(chunks);
}
