import { z } from 'zod';

// spec 2: the building blocks of the operations' `output` schemas (api/operation.ts). Each
// resource's own schema lives beside its input in api/operations/<resource>/schema.ts; the REST
// answer, the MCP tool's outputSchema/structuredContent and the OpenAPI document all come from
// it, and the test suite checks every JSON response against it (test/support/contract.ts), so a
// field added to a response and not to its schema fails the suite. Objects are strict for that
// reason; a client still ignores unknown fields (spec 9 rule 3).

export const dateTime = z.string().describe('ISO 8601 date-time, UTC');
export const nullableDateTime = dateTime.nullable();

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

const components = new Map<string, z.ZodType>();

/**
 * Names `schema` as a component of the OpenAPI document (`#/components/schemas/<id>`), referenced
 * from every operation that returns it instead of being repeated inline.
 */
export function component<T extends z.ZodType>(id: string, schema: T): T {
  const known = components.get(id);
  if (known && known !== schema) throw new Error(`Two output schemas are named ${id}`);
  components.set(id, schema);
  return schema;
}

/** The named output schemas, in the order their modules declared them. */
export function namedComponents(): ReadonlyMap<string, z.ZodType> {
  return components;
}
