import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { config } from '../../lib/config';
import { connect, startMcpStack, type McpStack } from '../support/mcp';
import { startOAuthApi } from '../oauth/support';
import { oauthToken } from '../oauth/support';
import { dataClient, type TestServer } from '../support/app';
import { workspaceWithKey } from '../support/factories';
import { assertErrorEnvelope } from '../support/foundation';
import { CLIENT_ERROR_CODES, inputJsonSchema, mcpTools, restRoutes, type RestRoute } from './catalogue';
import {
  FUZZ_RUNS,
  FUZZ_SEED,
  inputOf,
  queryOf,
  RAW_BODIES,
  segmentOf,
  terminateGenerationJobs,
  workspaceRows,
  type Fixtures,
} from './fuzzing';

// spec 7.1 / 7.2 under hostile input: every REST route of the route table and every MCP tool
// of the registry is called with plausible and mutated inputs generated from its own zod schema
// (fast-check, FUZZ_RUNS cases each, seed FUZZ_SEED printed so a failure replays). Whatever
// comes in, the answer is never a 5xx: a success, or the 7.1 envelope with a 7.2 client-error
// code; and a refusal leaves every workspace row (the outbox included) as it was.

const routes = await restRoutes();

/** fc.assert with a short report: the counterexamples can hold 100 KB strings. */
async function check<T>(prop: fc.IAsyncProperty<T>): Promise<void> {
  const out = await fc.check(prop, { numRuns: FUZZ_RUNS, seed: FUZZ_SEED, endOnFailure: true });
  if (!out.failed) return;
  const err = out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance);
  throw new Error(`${err.slice(0, 1500)}\n(replay: FUZZ_SEED=${FUZZ_SEED} FUZZ_RUNS=${FUZZ_RUNS}, path ${out.counterexamplePath})`);
}

/** Every supported Service-Api-Version (an operation's scopes may depend on it), none, and junk. */
const VERSIONS = fc.constantFrom<string | undefined>(undefined, ...config.apiVersions.supported, '1999-01-01', 'latest', '');

interface Answer {
  status: number;
  text: string;
  headers: Headers;
}

function assertEnvelope(a: Answer, what: string): void {
  assert.ok(a.status < 500, `${what}: ${a.status} ${a.text.slice(0, 300)}`);
  if (a.status < 400) return;
  let body: any;
  try {
    body = JSON.parse(a.text);
  } catch {
    assert.fail(`${what}: a ${a.status} without a JSON body: ${a.text.slice(0, 200)}`);
  }
  const e = assertErrorEnvelope(body, what);
  assert.ok(CLIENT_ERROR_CODES.has(e.code), `${what}: code ${e.code} is not a 7.2 client error`);
  assert.equal(a.headers.get('content-type')?.split(';')[0], 'application/json', what);
}

describe('fuzzing every operation (spec 7.1, 7.2)', function () {
  this.timeout(600_000);
  let api: TestServer & { restore(): void };
  let ws: Awaited<ReturnType<typeof workspaceWithKey>>;
  let token: string;
  const fixtures: Fixtures = {};
  const previousLimits = { ...config.rateLimit };
  const counts: Record<string, number> = {};

  before(async () => {
    // The suite sends hundreds of requests a minute on purpose; the limiter has its own tests.
    Object.assign(config.rateLimit, { readPerWindow: 1_000_000, writePerWindow: 1_000_000, unauthenticatedPerWindow: 1_000_000 });
    api = await startOAuthApi();
    ws = await workspaceWithKey({ name: 'Fuzz target' });
    token = await oauthToken(api.url, ws.workspace.id);
    const call = dataClient(api.url, token);
    fixtures.projectId = ws.project.id;
    fixtures.postId = (await call('POST', '/v1/posts', { projectId: ws.project.id, content: 'Fuzz fixture' })).id;
    fixtures.noteId = (await call('POST', '/v1/notes', { projectId: ws.project.id, content: 'Fuzz note' })).id;
    fixtures.ideaId = (await call('POST', '/v1/ideas', { projectId: ws.project.id, title: 'Fuzz idea' })).id;
    fixtures.endpointId = (
      await call('POST', '/v1/webhook-endpoints', { url: 'https://hooks.example.com/in', events: ['post.created'] })
    ).id;
    console.log(`      fuzz: FUZZ_SEED=${FUZZ_SEED} FUZZ_RUNS=${FUZZ_RUNS}`);
  });
  after(async () => {
    await terminateGenerationJobs([ws.workspace.id]);
    Object.assign(config.rateLimit, previousLimits);
    api.restore();
    await api.close();
    console.log(`      fuzz cases: ${JSON.stringify(counts)}`);
  });

  async function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
    const res = await fetch(api.url + path, { method, headers: { Authorization: `Bearer ${token}`, ...headers }, body });
    return { status: res.status, text: await res.text(), headers: res.headers };
  }

  /** One request; a refusal must not have written anything. */
  async function probe(what: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<void> {
    const before = await workspaceRows(ws.workspace.id);
    const a = await send(method, path, headers, body);
    assertEnvelope(a, what);
    if (a.status >= 400)
      assert.deepEqual(await workspaceRows(ws.workspace.id), before, `${what}: refused with ${a.status} but rows changed`);
    counts.rest = (counts.rest ?? 0) + 1;
    counts[`rest ${a.status}`] = (counts[`rest ${a.status}`] ?? 0) + 1;
  }

  function pathOf(r: RestRoute, segments: string[]): string {
    let i = 0;
    return r.path.replace(/:(\w+)/g, () => segments[i++]!);
  }

  for (const r of routes) {
    it(`${r.method} ${r.path}: generated and mutated inputs`, async () => {
      const schema = inputJsonSchema(r.op);
      const segments = fc.tuple(...r.params.map((p) => segmentOf(fixtures[p])));
      await check(
        fc.asyncProperty(
          inputOf(schema, fixtures),
          r.params.length ? segments : fc.constant([] as string[]),
          VERSIONS,
          async ({ mutation, input }, segs, version) => {
            const body = { ...input };
            for (const p of r.params) delete body[p];
            const path = pathOf(r, segs);
            const v: Record<string, string> = version === undefined ? {} : { 'Service-Api-Version': version };
            if (r.op.inputSource === 'query') {
              const q = queryOf(body, path.length);
              await probe(`${mutation} ${version ?? ''} ${r.method} ${path}?${q.slice(0, 200)}`, r.method, q ? `${path}?${q}` : path, v);
            } else {
              await probe(
                `${mutation} ${version ?? ''} ${r.method} ${path} ${JSON.stringify(body).slice(0, 200)}`,
                r.method,
                path,
                { 'Content-Type': 'application/json', ...v },
                JSON.stringify(body),
              );
            }
          },
        ),
      );
    });

    if (r.op.inputSource === 'body') {
      it(`${r.method} ${r.path}: malformed bodies and wrong content types`, async () => {
        const path = pathOf(
          r,
          r.params.map((p) => fixtures[p] ?? 'missing'),
        );
        for (const raw of RAW_BODIES) {
          await probe(
            `${raw.name} ${r.method} ${path}`,
            r.method,
            path,
            raw.contentType ? { 'Content-Type': raw.contentType } : {},
            raw.body,
          );
        }
      });
    }
  }

  describe('MCP tools', () => {
    let stack: McpStack;
    let client: Client;
    before(async () => {
      stack = await startMcpStack();
    });
    // A session per tool: the SDK client's transport adds an abort listener per request to one
    // signal, and thousands of calls on one client trip Node's listener-leak warning.
    beforeEach(async () => {
      client = await connect('streamable', stack.mcpUrl, ws.key);
    });
    afterEach(async () => {
      await client?.close();
    });
    after(async () => {
      await stack?.close();
    });

    for (const tool of mcpTools) {
      it(`${tool.name}: generated and mutated arguments`, async () => {
        const schema = tool.operation ? inputJsonSchema(tool.operation) : (tool.inputSchema as never);
        await check(
          fc.asyncProperty(inputOf(schema, fixtures), async ({ mutation, input }) => {
            const what = `${mutation} ${tool.name} ${JSON.stringify(input).slice(0, 200)}`;
            const before = await workspaceRows(ws.workspace.id);
            const r = (await client.callTool({ name: tool.name, arguments: input })) as CallToolResult;
            counts.mcp = (counts.mcp ?? 0) + 1;
            const outcome = r.isError ? `mcp ${(r.structuredContent as { code: string }).code}` : 'mcp ok';
            counts[outcome] = (counts[outcome] ?? 0) + 1;
            if (!r.isError) return;
            const s = r.structuredContent as { code: string; message: string; requestId: string; documentationUrl: string };
            assert.ok(CLIENT_ERROR_CODES.has(s.code), `${what}: code ${s.code}: ${s.message}`);
            assert.match(s.requestId, /^req_/, what);
            assert.equal(typeof s.documentationUrl, 'string', what);
            assert.deepEqual(await workspaceRows(ws.workspace.id), before, `${what}: refused with ${s.code} but rows changed`);
          }),
        );
      });
    }
  });
});
