import fc from 'fast-check';
import { db } from '../../lib/db';
import type { JsonSchema } from './catalogue';

// Input generation for the fuzz suite: plausible values drawn from an operation's JSON Schema
// (its zod input, as the MCP door publishes it), and the mutations a hostile or careless caller
// sends. Every case is one HTTP request or tool call; the suite checks the answer's shape and
// that a refusal wrote nothing.

export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 25);
export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);

/** Ids the generators can aim at, by parameter name (postId → a real post of the workspace). */
export type Fixtures = Record<string, string>;

const UNICODE_EDGES = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\uD800',
  '\uDFFF',
  'x\uD83D',
  '\uFFFF',
  '\uFEFF',
  '\u202Eevil',
  'e\u0301',
  '\u200B\u200D',
  '😀'.repeat(50),
  '𝕏',
  'ﷺ',
  'İ',
  'ß',
  '\r\n\t',
  '"\'`;--',
  '<script>alert(1)</script>',
  '${7*7}',
  '../../etc/passwd',
  '%00',
  '%',
  'null',
  'undefined',
  '[object Object]',
];

const BAD_DATES = [
  '2026-02-30T09:00:00Z',
  '2026-13-01T09:00:00Z',
  '2026-00-10T09:00:00Z',
  '2026-06-01T24:00:00Z',
  '2026-06-01T23:60:00Z',
  '2026-06-01T09:00:61Z',
  '2026-06-01T09:00:00+25:00',
  '2026-06-01T09:00:00+14:99',
  '2026-06-01T09:00:00-99:00',
  '2026-06-01',
  '2026-06-01 09:00',
  '+275760-09-13T00:00:00Z',
  '-000001-01-01T00:00:00Z',
  '0000-00-00T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '1969-12-31T23:59:59Z',
  '2026-06-01T09:00:00.1234567890Z',
  'tomorrow',
  '1764000000',
  'Infinity',
  '2026-W23-1',
  '2026-03-29T02:30:00',
];

const BAD_NUMBERS = [-1, 0, -0, 1.5, 1e308, -1e308, 2 ** 53 + 1, -(2 ** 63), 2 ** 31, 1e-320, 999999999999];

const HUGE = ['x'.repeat(100_001), 'é'.repeat(70_000), '😀'.repeat(60_000)];

const strOf = (s: JsonSchema) => {
  if (s.enum) return fc.constantFrom(...(s.enum as string[]));
  if (s.pattern?.includes('\\d{4}-\\d{2}-\\d{2}T') || s.pattern?.startsWith('^(\\d{4})')) {
    return fc
      .date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2030-12-31T00:00:00Z'), noInvalidDate: true })
      .map((d) => d.toISOString());
  }
  if (s.pattern === '^\\d{4}-\\d{2}-\\d{2}$')
    return fc
      .date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2030-12-31T00:00:00Z'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10));
  if (s.format === 'uri' || s.format === 'url') return fc.webUrl();
  return fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 40, 40) });
};

/** A plausible value for a schema; string properties named like a fixture get its id most of the time. */
export function valueOf(s: JsonSchema | undefined, fixtures: Fixtures, name?: string): fc.Arbitrary<unknown> {
  if (!s) return fc.jsonValue();
  if (name && fixtures[name])
    return fc.oneof({ weight: 4, arbitrary: fc.constant(fixtures[name]) }, { weight: 1, arbitrary: fc.string({ maxLength: 30 }) });
  if (s.const !== undefined) return fc.constant(s.const);
  const alt = s.anyOf ?? s.oneOf;
  if (alt?.length) return fc.oneof(...alt.map((a) => valueOf(a, fixtures, name)));
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'string':
      return strOf(s);
    case 'integer':
      // An accepted wait is a wait: a second per case made the two image-generation operations
      // 25 s each. Refused values (negative, fractional, huge) come from the mutations.
      if (name === 'wait_for_completion_ms') return fc.integer({ min: -1000, max: 50 });
      return fc.integer({ min: s.minimum ?? -1000, max: Math.min(s.maximum ?? 1000, 1_000_000) });
    case 'number':
      return fc.double({ min: s.minimum ?? -1000, max: s.maximum ?? 1000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(valueOf(s.items, fixtures), {
        minLength: (s.minItems as number) ?? 0,
        maxLength: Math.min((s.maxItems as number) ?? 4, 4),
      });
    case 'object':
      return objectOf(s, fixtures);
    default:
      return name === 'limit' ? fc.integer({ min: -5, max: 500 }) : fc.jsonValue({ maxDepth: 2 });
  }
}

function objectOf(s: JsonSchema, fixtures: Fixtures): fc.Arbitrary<Record<string, unknown>> {
  const props = s.properties ?? {};
  const required = new Set(s.required ?? []);
  const shape: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, v] of Object.entries(props)) shape[k] = valueOf(v, fixtures, k);
  return fc.record(shape, { requiredKeys: Object.keys(props).filter((k) => required.has(k) || fixtures[k] !== undefined) }) as fc.Arbitrary<
    Record<string, unknown>
  >;
}

const hostile = fc.oneof(
  fc.constantFrom(...UNICODE_EDGES),
  fc.constantFrom(...BAD_DATES),
  fc.constantFrom(...BAD_NUMBERS),
  fc.constantFrom(...HUGE),
  fc.constantFrom(null, true, false, [], {}, [1, 'a'], { $ne: null }, { __proto__: { admin: true } }),
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.jsonValue({ maxDepth: 3 }),
);

export type Mutation = 'plausible' | 'drop' | 'extra' | 'wrong' | 'nested';

/** An input object: plausible, or one of the mutations (a field dropped, added, or replaced by hostile data). */
export function inputOf(s: JsonSchema, fixtures: Fixtures): fc.Arbitrary<{ mutation: Mutation; input: Record<string, unknown> }> {
  const keys = Object.keys(s.properties ?? {});
  const base = objectOf(s, fixtures);
  const plausible = base.map((input) => ({ mutation: 'plausible' as const, input }));
  const drop = fc.tuple(base, fc.constantFrom(...(keys.length ? keys : ['x']))).map(([o, k]) => {
    const c = { ...o };
    delete c[k];
    return { mutation: 'drop' as const, input: c };
  });
  const extra = fc
    .tuple(
      base,
      fc.oneof(
        fc.constantFrom('__proto__', 'constructor', 'workspaceId', 'id', 'status', 'publishedAt', 'toString'),
        fc.string({ minLength: 1, maxLength: 20 }),
      ),
      hostile,
    )
    .map(([o, k, v]) => ({ mutation: 'extra' as const, input: JSON.parse(JSON.stringify({ ...o, [k]: v })) as Record<string, unknown> }));
  const wrong = fc
    .tuple(base, fc.constantFrom(...(keys.length ? keys : ['x'])), hostile)
    .map(([o, k, v]) => ({ mutation: 'wrong' as const, input: { ...o, [k]: v } }));
  const nested = fc
    .tuple(base, fc.constantFrom(...(keys.length ? keys : ['x'])), hostile)
    .map(([o, k, v]) => ({ mutation: 'nested' as const, input: { ...o, [k]: { [k]: v, deep: [[[[v]]]] } } }));
  return fc.oneof(
    { weight: 3, arbitrary: plausible },
    { weight: 1, arbitrary: drop },
    { weight: 1, arbitrary: extra },
    { weight: 4, arbitrary: wrong },
    { weight: 1, arbitrary: nested },
  );
}

/** Percent-encodes every UTF-8 byte (lone surrogates become U+FFFD, as a client library would send them). */
export function encodeAll(s: string): string {
  return Array.from(Buffer.from(s, 'utf8'), (b) => `%${b.toString(16).padStart(2, '0')}`).join('');
}

/** A path segment: the fixture id, nonsense, or a malformed percent-encoding. */
export function segmentOf(fixture: string | undefined): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(fixture ?? 'missing') },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          fc.string({ minLength: 1, maxLength: 30 }),
          fc.constantFrom(...UNICODE_EDGES.filter((u) => u !== '')),
          fc.constant('x'.repeat(5000)),
        )
        .map(encodeAll),
    },
    { weight: 1, arbitrary: fc.constantFrom('%', '%E0%A4%A', '%FF', '%C0%AF', '..', '%2e%2e', '%2F', 'a%00b') },
  );
}

/** encodeURIComponent where it can (a lone surrogate throws there); every byte otherwise. */
function encodeQ(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return encodeAll(s);
  }
}

/**
 * A request head over 16 KB is refused by the listener before any route is known (400
 * invalid_request from api/listen.ts; test/attack/transport.test.ts covers that answer), which
 * says nothing about the operation, so query values are cut to 2,000 characters and the query to
 * 12,000, and the whole request target (path and query) to 15,200 characters, which leaves room
 * for the headers: huge strings reach the operations through bodies and path segments instead.
 */
const QUERY_VALUE_MAX = 2_000;
const QUERY_MAX = 12_000;
const REQUEST_TARGET_MAX = 15_200;

/**
 * The query string of an input object: strings as sent, arrays as repeated parameters, objects
 * bracketed; whole parameters are dropped from the end until it fits beside a path of `pathLength`.
 */
export function queryOf(input: Record<string, unknown>, pathLength = 0): string {
  const max = Math.min(QUERY_MAX, REQUEST_TARGET_MAX - pathLength - 1);
  const parts: string[] = [];
  const add = (k: string, v: unknown) => {
    if (v === undefined) return;
    if (Array.isArray(v)) {
      v.forEach((x) => add(k, x));
      return;
    }
    if (v !== null && typeof v === 'object') {
      for (const [kk, vv] of Object.entries(v)) add(`${k}[${kk}]`, vv);
      return;
    }
    parts.push(`${encodeQ(k)}=${encodeQ(String(v).slice(0, QUERY_VALUE_MAX))}`);
  };
  for (const [k, v] of Object.entries(input)) add(k, v);
  while (parts.length && parts.join('&').length > max) parts.pop();
  return parts.join('&');
}

/** Transport-level mutations of a JSON body (REST only). */
export const RAW_BODIES: { name: string; contentType: string | null; body: string }[] = [
  { name: 'malformed JSON', contentType: 'application/json', body: '{"content": "x",' },
  { name: 'trailing garbage', contentType: 'application/json', body: '{"content":"x"} trailing' },
  { name: 'JSON array', contentType: 'application/json', body: '[{"content":"x"}]' },
  { name: 'JSON string', contentType: 'application/json', body: '"x"' },
  { name: 'JSON null', contentType: 'application/json', body: 'null' },
  { name: 'JSON number', contentType: 'application/json', body: '1e999' },
  { name: 'empty JSON body', contentType: 'application/json', body: '' },
  { name: 'deep nesting', contentType: 'application/json', body: `${'['.repeat(5000)}${']'.repeat(5000)}` },
  { name: 'duplicate keys', contentType: 'application/json', body: '{"projectId":"a","projectId":{"$gt":""}}' },
  {
    name: 'proto pollution',
    contentType: 'application/json',
    body: '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}',
  },
  { name: 'BOM', contentType: 'application/json', body: '\uFEFF{}' },
  { name: 'text/plain', contentType: 'text/plain', body: '{"content":"x"}' },
  { name: 'form', contentType: 'application/x-www-form-urlencoded', body: 'content=x&projectId=y' },
  {
    name: 'multipart',
    contentType: 'multipart/form-data; boundary=zz',
    body: '--zz\r\nContent-Disposition: form-data; name="content"\r\n\r\nx\r\n--zz--\r\n',
  },
  { name: 'no content type', contentType: null, body: '{"content":"x"}' },
  { name: 'json charset latin1', contentType: 'application/json; charset=latin1', body: '{"content":"x"}' },
  { name: 'bogus media type', contentType: 'application/json/../x', body: '{}' },
  { name: 'oversized body', contentType: 'application/json', body: JSON.stringify({ content: 'y'.repeat(3_000_000) }) },
];

let countSql: string | undefined;

/**
 * Rows of every table that carries a workspace_id, for one workspace: a refusal must leave
 * all of them (the outbox included) as they were.
 */
export async function workspaceRows(workspaceId: string): Promise<Record<string, number>> {
  if (!countSql) {
    const tables = (
      await db().raw(
        `select table_name from information_schema.columns where table_schema = current_schema() and column_name = 'workspace_id' and table_name not in ('idempotency_keys') order by 1`,
      )
    ).rows as { table_name: string }[];
    countSql = tables
      .map((t) => `select '${t.table_name}' as t, count(*)::int as n from "${t.table_name}" where workspace_id = :w`)
      .join(' union all ');
  }
  const rows = (await db().raw(countSql, { w: workspaceId })).rows as { t: string; n: number }[];
  return Object.fromEntries(rows.map((r) => [r.t, r.n]));
}

/**
 * Generation jobs the suites' plausible inputs queued have no worker here; terminated, they
 * cannot run later in another suite's worker on the run's task queue.
 */
export async function terminateGenerationJobs(workspaceIds: string[]): Promise<void> {
  const { temporalClient, workflowIds } = await import('../../lib/temporal/client');
  const client = await temporalClient();
  const jobs = (await db()('jobs').whereIn('workspace_id', workspaceIds).select('id')) as { id: string }[];
  await Promise.all(
    jobs.map((j) =>
      client.workflow
        .getHandle(workflowIds.generation(j.id))
        .terminate('attack suite cleanup')
        .catch(() => undefined),
    ),
  );
}
