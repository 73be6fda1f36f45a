import { z } from 'zod';
import { ApiError, errors, type ErrorCode } from '../lib/errors';

// Input parsing at the edge (habit 4). Special cases of spec 7.2 ride on the issue's params:
// `apiCode` names the code an issue maps to (payload_too_large, bad_pagination, ...).

/** A string limit whose breach is 413 payload_too_large rather than 422 (spec 8). */
export function boundedText(max: number, field: string) {
  return z.string().superRefine((s, ctx) => {
    if (s.length > max) ctx.addIssue({ code: 'custom', message: `\`${field}\` is longer than ${max} characters (${s.length}).`, params: { apiCode: 'payload_too_large', limit: max, actual: s.length } });
  });
}

const PRIORITY: ErrorCode[] = ['payload_too_large', 'bad_pagination', 'bad_cursor', 'invalid_request', 'unprocessable'];

export function validationError(issues: z.core.$ZodIssue[], source: 'query' | 'body'): ApiError {
  const codes = issues.map((i) => ((i as { params?: { apiCode?: ErrorCode } }).params?.apiCode) ?? (source === 'query' ? 'invalid_request' : 'unprocessable'));
  const code = PRIORITY.find((c) => codes.includes(c)) ?? codes[0] ?? 'unprocessable';
  const relevant = issues.filter((_, idx) => codes[idx] === code);
  const first = relevant[0];
  const where = first && first.path.length ? `\`${first.path.join('.')}\`: ` : '';
  const message = first ? `${where}${first.message}` : 'The request is not valid.';
  const details = { issues: relevant.map((i) => ({ path: i.path.join('.'), message: i.message })) };
  switch (code) {
    case 'payload_too_large': return errors.payloadTooLarge(message, details);
    case 'bad_pagination': return errors.badPagination(message);
    case 'bad_cursor': return errors.badCursor(message);
    case 'invalid_request': return errors.invalidRequest(message, details);
    default: return errors.unprocessable(message, details);
  }
}

export function parseInput<S extends z.ZodType>(schema: S, raw: unknown, source: 'query' | 'body'): z.infer<S> {
  const result = schema.safeParse(raw);
  if (!result.success) throw validationError(result.error.issues, source);
  return result.data;
}

/** ISO 8601 date-time, with or without offset; bare dates are refused (spec 4.4 PATCH). */
export const isoDateTime = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i, 'must be an ISO 8601 date-time such as 2026-12-01T09:00:00Z (a bare date is not accepted)');
export const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date in YYYY-MM-DD form').refine((s) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)), 'is not a real date');

export const CONTENT_TYPES = ['PERSONAL', 'BUSINESS_INTERNAL', 'BUSINESS_EXTERNAL', 'EDUCATIONAL', 'UNKNOWN'] as const;
