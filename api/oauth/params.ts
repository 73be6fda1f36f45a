import type { Context } from 'koa';
import { InvalidRequest } from './errors';

// Request parameters of the OAuth endpoints. The body parser (api/rest/bodyParser.ts) already read
// form-encoded and JSON bodies into ctx.state.body; this adds the OAuth rules on top.

export type Params = Record<string, string>;

/** A request's parameters, with the `resource` indicators apart: RFC 8707 2 lets them repeat. */
export interface ParsedParams {
  params: Params;
  resources: string[];
}

const REPEATABLE = 'resource';

/**
 * RFC 6749 3.1/3.2: parameters sent without a value are treated as omitted, and request and
 * response parameters must not be included more than once (except `resource`, above).
 */
function collect(entries: Iterable<[string, string]>): ParsedParams {
  const out: Params = {};
  const resources: string[] = [];
  const seen = new Set<string>();
  for (const [k, v] of entries) {
    if (k === REPEATABLE) {
      if (v !== '') resources.push(v);
      continue;
    }
    if (seen.has(k)) throw new InvalidRequest(`The parameter \`${k}\` is included more than once.`);
    seen.add(k);
    if (v !== '') out[k] = v;
  }
  return { params: out, resources };
}

export function queryParams(ctx: Context): ParsedParams {
  return collect(new URLSearchParams(ctx.querystring).entries());
}

/**
 * Form-encoded (RFC 6749 4.1.3) or, as spec 5.3.4 also accepts, a JSON object of strings
 * (`resource` may be an array of strings there, the JSON spelling of a repeated parameter).
 */
export function bodyParams(ctx: Context): ParsedParams {
  if (ctx.is('application/x-www-form-urlencoded')) return collect(new URLSearchParams(String(ctx.state.rawBody ?? '')).entries());
  const body = ctx.state.body as unknown;
  if (body === undefined) return { params: {}, resources: [] };
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new InvalidRequest('The request body must be form-encoded or a JSON object.');
  const entries: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (v === null || v === undefined) continue;
    if (k === REPEATABLE && Array.isArray(v) && v.every((x) => typeof x === 'string')) {
      for (const x of v as string[]) entries.push([k, x]);
      continue;
    }
    if (typeof v !== 'string') throw new InvalidRequest(`The parameter \`${k}\` must be a string.`);
    entries.push([k, v]);
  }
  return collect(entries);
}

export function required(params: Params, name: string): string {
  const v = params[name];
  if (v === undefined) throw new InvalidRequest(`The parameter \`${name}\` is required.`);
  return v;
}
