import { z } from 'zod';

// spec 2.1: the envelopes of the operations' `output` schemas (api/operation.ts) around a
// resource's schema, which lives with its presenter in lib/presenters/<resource>.ts.

/** spec 2.1: a single resource. */
export function single<T extends z.ZodType>(resource: T) {
  return z.object({ data: resource }).strict();
}

/** spec 2.1: a page of resources; `withTotal` for the webhook endpoint list. */
export function page<T extends z.ZodType>(resource: T, opts: { withTotal?: boolean } = {}) {
  const pagination = z
    .object({
      next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page.'),
      has_more: z.boolean(),
      ...(opts.withTotal ? { total: z.number().int() } : {}),
    })
    .strict();
  return z.object({ data: z.array(resource), pagination }).strict();
}
