import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../api/openapi/document';

// A response checked against the OpenAPI document the service publishes (issue 17): the test
// suite holds every JSON answer of its HTTP helper to it (test/support/contract.ts), and the
// operability bench times the same check (bench/operability.ts). A field added to a response but
// not to its operation's `output` schema, an undocumented status or an error code an operation
// is not documented to answer is a violation.

type Json = Record<string, any>;

interface Compiled {
  method: string;
  template: string;
  pattern: RegExp;
  responses: Map<string, { validate: ValidateFunction; codes?: string[] }>;
  /** Statuses documented without a body or with a body other than JSON (a redirect, an HTML page, an empty 200). */
  bodiless: Set<string>;
}

let compiled: Compiled[] | undefined;

function compile(): Compiled[] {
  const doc = buildOpenApiDocument() as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  const base = 'https://contract.test/openapi.json';
  // The document itself is the schema resource the responses' $refs point into.
  ajv.addSchema({ $id: base, components: doc.components } as Json);
  const rebase = (schema: unknown) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${base}#/components/`));
  const out: Compiled[] = [];
  for (const [template, ops] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    for (const [method, op] of Object.entries(ops)) {
      const responses = new Map<string, { validate: ValidateFunction; codes?: string[] }>();
      const bodiless = new Set<string>();
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        const content = (response.content ?? {}) as Record<string, Json>;
        const schema = content['application/json']?.schema;
        // A status may be documented with an HTML page and a JSON envelope both (/oauth/authorize's
        // 400: the page, or the listener's refusal before routing): either answer conforms.
        if (!schema || Object.keys(content).some((type) => type !== 'application/json')) bodiless.add(status);
        if (!schema) continue;
        responses.set(status, { validate: ajv.compile(rebase(schema)), codes: response['x-error-codes'] });
      }
      out.push({ method: method.toUpperCase(), template, pattern, responses, bodiless });
    }
  }
  // Literal paths first, so /v1/posts/generations is not taken for /v1/posts/{postId}.
  return out.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
}

/** The violations of one response; [] when it conforms or is outside the document (MCP, the sign-in pages). */
export function checkResponse(method: string, url: string, status: number, contentType: string | null, body: unknown): string[] {
  compiled ??= compile();
  const path = new URL(url).pathname;
  const op = compiled.find((c) => c.method === method.toUpperCase() && c.pattern.test(path));
  if (!op) return [];
  // A request the HTTP parser refuses is answered by the listener (api/listen.ts) with a 400
  // envelope, every test server being set up like production: a bare 431 is a violation here.
  if (status === 304 || status === 499) return [];
  const where = `${method.toUpperCase()} ${op.template} → ${status}`;
  const json = contentType?.includes('application/json') ?? false;
  // A status documented without a JSON body (the authorize redirect or its HTML page, the
  // revocation's empty 200) conforms with any other body, and must not carry JSON unless it is
  // documented with JSON too.
  if (!json) return op.bodiless.has(String(status)) ? [] : [`${where}: answered ${contentType ?? 'no content type'}, not JSON`];
  const expected =
    op.responses.get(String(status)) ?? (status >= 400 && !op.bodiless.has(String(status)) ? op.responses.get('default') : undefined);
  if (!expected)
    return op.bodiless.has(String(status))
      ? [`${where}: answered JSON, documented without`]
      : [`${where}: status not documented for this operation (body ${JSON.stringify(body).slice(0, 300)})`];
  const problems: string[] = [];
  if (!expected.validate(body)) {
    problems.push(
      `${where}: ${(expected.validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${(e.params as Json).additionalProperty})` : ''}`).join('; ')}`,
    );
  }
  if (expected.codes && !expected.codes.includes((body as Json)?.error?.code)) {
    problems.push(`${where}: error code ${(body as Json)?.error?.code} is not among the documented ${expected.codes.join(', ')}`);
  }
  return problems;
}
