import { z } from 'zod';

// spec 2: the building blocks of the resources' output schemas. Each resource's schema and its
// presenter live together in lib/presenters/<resource>.ts, below both doors, so the domain
// code that presents a resource (a job's webhook event, a search hit) and the operations that
// answer it use one definition; an operation's schema.ts names the output beside its input. The
// REST answer, the MCP tool's outputSchema/structuredContent and the OpenAPI document all come
// from these schemas, and the test suite checks every JSON response against them
// (test/support/contract.ts), so a field added to a response and not to its schema fails the
// suite. Objects are strict for that reason; a client still ignores unknown fields (spec 9 rule 3).

export const dateTime = z.string().describe('ISO 8601 date-time, UTC');
export const nullableDateTime = dateTime.nullable();

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

/** A named output object: strict, as every output object is (see above). */
export function objectComponent<Shape extends z.core.$ZodLooseShape>(id: string, shape: Shape) {
  return component(id, z.strictObject(shape));
}

/** The named output schemas (the OpenAPI document lists them by name). */
export function namedComponents(): ReadonlyMap<string, z.ZodType> {
  return components;
}
