import { z } from 'zod';
import { ApiError, errors, type ErrorCode } from '../lib/errors';

// Input parsing at the edge (habit 4). Special cases of spec 7.2 ride on the issue's params:
// `apiCode` names the code an issue maps to (payload_too_large, bad_pagination, ...).

/** A string limit whose breach is 413 payload_too_large rather than 422 (spec 8). */
export function boundedText(max: number, field: string) {
  return z.string().superRefine((s, ctx) => {
    if (s.length > max)
      ctx.addIssue({
        code: 'custom',
        message: `\`${field}\` is longer than ${max} characters (${s.length}).`,
        params: { apiCode: 'payload_too_large', limit: max, actual: s.length },
      });
  });
}

const PRIORITY: ErrorCode[] = ['payload_too_large', 'bad_pagination', 'bad_cursor', 'invalid_request', 'unprocessable'];

/**
 * spec 7.2: "missing `projectId` or source fields" is 400 invalid_request while a bad shape or
 * enum of a body is 422. The fields the spec names for it, by their top-level key; every
 * operation's input follows the rule here, in the one validation step.
 */
export const MISSING_IS_INVALID_REQUEST: ReadonlySet<string> = new Set(['projectId', 'source']);

function isAbsent(raw: unknown, path: readonly PropertyKey[]): boolean {
  let v: unknown = raw;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return true;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v === undefined;
}

function isMissingNamedField(issue: z.core.$ZodIssue, raw: unknown): boolean {
  const top = issue.path[0];
  return issue.code === 'invalid_type' && typeof top === 'string' && MISSING_IS_INVALID_REQUEST.has(top) && isAbsent(raw, issue.path);
}

export function validationError(issues: z.core.$ZodIssue[], source: 'query' | 'body', raw?: unknown): ApiError {
  const codes = issues.map(
    (i) =>
      (i as { params?: { apiCode?: ErrorCode } }).params?.apiCode ??
      (source === 'query' || (raw !== undefined && isMissingNamedField(i, raw)) ? 'invalid_request' : 'unprocessable'),
  );
  const code = PRIORITY.find((c) => codes.includes(c)) ?? codes[0] ?? 'unprocessable';
  const relevant = issues.filter((_, idx) => codes[idx] === code);
  const first = relevant[0];
  const where = first && first.path.length ? `\`${first.path.join('.')}\`: ` : '';
  const message = first ? `${where}${first.message}` : 'The request is not valid.';
  const details = { issues: relevant.map((i) => ({ path: i.path.join('.'), message: i.message })) };
  switch (code) {
    case 'payload_too_large':
      return errors.payloadTooLarge(message, details);
    case 'bad_pagination':
      return errors.badPagination(message);
    case 'bad_cursor':
      return errors.badCursor(message);
    case 'invalid_request':
      return errors.invalidRequest(message, details);
    default:
      return errors.unprocessable(message, details);
  }
}

/** Path of the first string (or key) holding U+0000, or null. */
/** A lone UTF-16 surrogate: a string that is not well-formed Unicode. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** What Postgres cannot store in a string, or null. */
function badText(s: string): string | null {
  if (s.includes('\u0000')) return 'must not contain the NUL character (U+0000).';
  if (LONE_SURROGATE.test(s)) return 'must be well-formed Unicode (no lone surrogate).';
  return null;
}

/** The first string (value or key) Postgres could not store, with its path. */
function badTextPath(v: unknown, path: string[] = []): { path: string; message: string } | null {
  if (typeof v === 'string') {
    const message = badText(v);
    return message ? { path: path.join('.'), message } : null;
  }
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const hit = badTextPath(v[i], [...path, String(i)]);
      if (hit !== null) return hit;
    }
    return null;
  }
  if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      const keyMessage = badText(k);
      if (keyMessage) return { path: [...path, k].join('.'), message: keyMessage };
      const hit = badTextPath(x, [...path, k]);
      if (hit !== null) return hit;
    }
  }
  return null;
}

export function parseInput<S extends z.ZodType>(schema: S, raw: unknown, source: 'query' | 'body'): z.infer<S> {
  // Postgres text cannot hold U+0000 and its JSON types refuse a lone surrogate: such a value
  // would fail deep in a query as a 500, so it is refused here as the client's input error it
  // is, on every field of every operation.
  const bad = badTextPath(raw);
  if (bad !== null) {
    const message = `${bad.path ? `\`${bad.path}\`: ` : ''}${bad.message}`;
    const details = { issues: [{ path: bad.path, message: bad.message }] };
    throw source === 'query' ? errors.invalidRequest(message, details) : errors.unprocessable(message, details);
  }
  const result = schema.safeParse(raw);
  if (!result.success) throw validationError(result.error.issues, source, raw);
  return result.data;
}

/**
 * A calendar date that exists. `Date.parse` rolls impossible days over (2026-02-30 reads as
 * 2026-03-02), which would silently schedule on another day or reach Postgres, which refuses
 * it with a 500; so the fields are checked themselves.
 */
function isRealDate(year: number, month: number, day: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

const DATE_TIME_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):?(\d{2}))?$/i;

/** ISO 8601 date-time, with or without offset; bare dates are refused (spec 4.4 PATCH). */
export const isoDateTime = z
  .string()
  .regex(DATE_TIME_RE, 'must be an ISO 8601 date-time such as 2026-12-01T09:00:00Z (a bare date is not accepted)')
  .refine((s) => {
    const m = DATE_TIME_RE.exec(s);
    if (!m) return true; // the regex issue above already reports it
    const [, y, mo, d, h, mi, sec, oh, om] = m;
    return (
      isRealDate(Number(y), Number(mo), Number(d)) &&
      Number(h) <= 23 &&
      Number(mi) <= 59 &&
      Number(sec ?? 0) <= 59 &&
      Number(oh ?? 0) <= 23 &&
      Number(om ?? 0) <= 59
    );
  }, 'is not a real date-time');
export const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date in YYYY-MM-DD form')
  .refine((s) => isRealDate(Number(s.slice(0, 4)), Number(s.slice(5, 7)), Number(s.slice(8, 10))), 'is not a real date');

export const CONTENT_TYPES = ['PERSONAL', 'BUSINESS_INTERNAL', 'BUSINESS_EXTERNAL', 'EDUCATIONAL', 'UNKNOWN'] as const;
