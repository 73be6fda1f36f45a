import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AnyOperation } from '../../api/operation';
import { config } from '../../lib/config';
import { db } from '../../lib/db';
import { addMember } from '../../admin/provision';
import { connect, startMcpStack, type McpStack } from '../support/mcp';
import { startOAuthApi } from '../oauth/support';
import { oauthToken } from '../oauth/support';
import { dataClient, type TestServer } from '../support/app';
import { member, neverExisted, storedDocument, workspaceWithKey } from '../support/factories';
import { png } from '../media/images';
import { inputJsonSchema, mcpTools, restRoutes, type JsonSchema, type RestRoute } from './catalogue';
import { terminateGenerationJobs, valueOf, workspaceRows, type Fixtures } from './fuzzing';

// spec 1 rule 1, generated from the route table and the tool registry: for every route and
// tool whose input names an id (path parameter or field), the id of another workspace's object
// answers exactly like an id that never existed (same status, same code), through an API key,
// an OAuth token, and an OAuth token of a user who is also a Client member of the other
// workspace (tools: the key and that token); and the other workspace's rows stay as they were.

/** Every field name of a JSON Schema, at any depth and in every branch of a union. */
function fieldNames(s: JsonSchema | undefined): string[] {
  if (!s || typeof s !== 'object') return [];
  return [
    ...Object.entries(s.properties ?? {}).flatMap(([k, v]) => [k, ...fieldNames(v)]),
    ...[...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])].flatMap(fieldNames),
    ...fieldNames(s.items),
    ...(typeof s.additionalProperties === 'object' ? fieldNames(s.additionalProperties) : []),
  ];
}

/**
 * `…Id` fields that name no object of a workspace, so there is nothing to probe across
 * workspaces; every other id input must have a fixture (asserted below).
 */
const NOT_OBJECT_IDS: Record<string, string> = {
  clientId: "notes.create: the caller's own retry key for the note it creates (spec 4.3)",
  folderId: 'notes and knowledge documents: a free-form folder label; no folder object exists',
  videoId: 'knowledge.create: a YouTube video',
  eventId: "webhook deliveries: a filter within the endpoint's own deliveries (the endpoint id is probed)",
};

/** The inputs of a route or tool that name something by id: path parameters and `…Id` fields. */
function idInputs(schema: JsonSchema, params: readonly string[] = []): string[] {
  return [...new Set([...params, ...fieldNames(schema).filter((n) => /Id$/.test(n))])];
}

const routeSchema = (r: RestRoute) => inputJsonSchema(r.op);
const toolSchema = (t: (typeof mcpTools)[number]) => t.inputSchema as JsonSchema;
const allRoutes = await restRoutes();
// Only what takes an id is probed; the split itself is asserted below, so a route or tool that
// takes an id cannot fall on the wrong side unnoticed.
const routes = allRoutes.filter((r) => idInputs(routeSchema(r), r.params).length > 0);
const tools = mcpTools.filter((t) => idInputs(toolSchema(t)).length > 0);

type Ws = Awaited<ReturnType<typeof workspaceWithKey>>;

/** Values a valid input needs that a schema alone does not suggest. */
function seeds(f: Fixtures): Record<string, unknown[]> {
  return {
    url: ['https://hooks.example.com/in'],
    events: [['post.created']],
    source: [
      { type: 'note', noteId: f.noteId },
      { type: 'idea', ideaId: f.ideaId },
    ],
    content: ['Cross-workspace probe'],
    title: ['Probe'],
  };
}

/** Discriminators and values a schema alone does not suggest (a `type` that is a free string until refined). */
const VARIANTS: Record<string, Record<string, unknown>[]> = {
  // POST /v1/sources: the file variant carries the ids (projectId, uploadId).
  'sources.create': [{ type: 'file' }],
  // POST /v1/knowledge, add_to_knowledge_base: the same, for a document.
  'knowledge.create': [{ type: 'file' }],
  // POST /v1/uploads, create_upload_url: a media type the pattern accepts and a size.
  'uploads.create': [{ fileName: 'a.png', contentType: 'image/png', bytes: 100 }],
};

/** Valid inputs of an operation built on `f`'s objects: one per seed of `source`, else one. */
function baseInputs(op: AnyOperation, f: Fixtures): Record<string, unknown>[] {
  const schema = inputJsonSchema(op);
  const props = schema.properties ?? {};
  const s = seeds(f);
  const variants = 'source' in props ? s.source!.map((v) => ({ source: v })) : (VARIANTS[op.name] ?? [{}]);
  const out: Record<string, unknown>[] = [];
  for (const variant of variants) {
    const fixed: Record<string, unknown> = { ...variant };
    for (const k of Object.keys(props)) {
      if (k in fixed) continue;
      if (f[k] !== undefined) fixed[k] = f[k];
      else if (s[k] && (schema.required ?? []).includes(k)) fixed[k] = s[k]![0];
    }
    const candidates = [
      fixed,
      ...fc.sample(
        valueOf(schema, f).map((o) => ({ ...(o as object), ...fixed })),
        { numRuns: 200, seed: 7 },
      ),
    ];
    const good = candidates.find((c) => op.input.safeParse(c).success);
    if (good) out.push(good as Record<string, unknown>);
  }
  return out;
}

/** Every (path, B's id) in an input where A's fixture id sits. */
function idSlots(input: unknown, a: Fixtures, path: string[] = []): string[][] {
  if (!input || typeof input !== 'object') return [];
  return Object.entries(input).flatMap(([k, v]) => (typeof v === 'string' && a[k] === v ? [[...path, k]] : idSlots(v, a, [...path, k])));
}

function withAt(input: Record<string, unknown>, path: string[], value: string): Record<string, unknown> {
  const copy = structuredClone(input);
  let o: Record<string, unknown> = copy;
  for (const k of path.slice(0, -1)) o = o[k] as Record<string, unknown>;
  o[path.at(-1)!] = value;
  return copy;
}

describe('cross-workspace ids answer like ids that never existed (spec 1 rule 1)', function () {
  this.timeout(300_000);
  let api: TestServer & { restore(): void };
  let a: Ws;
  let b: Ws;
  const fa: Fixtures = {};
  const fb: Fixtures = {};
  const callers: { name: string; token: string }[] = [];
  let probes = 0;
  const previousLimits = { ...config.rateLimit };

  async function fixturesOf(ws: Ws, token: string, f: Fixtures) {
    const call = dataClient(api.url, token);
    f.workspaceId = ws.workspace.id;
    f.projectId = ws.project.id;
    f.postId = (await call('POST', '/v1/posts', { projectId: ws.project.id, content: 'Only mine' })).id;
    f.noteId = (await call('POST', '/v1/notes', { projectId: ws.project.id, content: 'My note' })).id;
    f.ideaId = (await call('POST', '/v1/ideas', { projectId: ws.project.id, title: 'My idea' })).id;
    f.endpointId = (await call('POST', '/v1/webhook-endpoints', { url: 'https://hooks.example.com/mine', events: ['post.created'] })).id;
    f.jobId =
      (
        await call('POST', '/v1/posts/generations', {
          projectId: ws.project.id,
          source: { type: 'text', text: 'A source text long enough to write about.' },
        })
      ).jobId ?? (await db()('jobs').where({ workspace_id: ws.workspace.id }).first()).id;
    // Media ids (spec 4.7): an asset of the library, and an upload handle (4.5).
    f.mediaId = (await call('POST', '/v1/media', { projectId: ws.project.id, content_base64: png(7, 5).toString('base64') })).id;
    f.uploadId = (
      await call('POST', '/v1/uploads', {
        projectId: ws.project.id,
        fileName: 'a.png',
        contentType: 'image/png',
        bytes: 100,
        purpose: 'media',
      })
    ).id;
    // Sources (spec 2.11): a text source.
    f.sourceId = (await call('POST', '/v1/sources', { projectId: ws.project.id, type: 'text', text: 'My source' })).id;
    f.statusId = (await db()('post_statuses').where({ workspace_id: ws.workspace.id }).first())?.id;
    // Ids in fields named after their role: a post an idea links to, a member asked to review.
    f.linkedPostId = f.postId;
    f.reviewerUserId = (await member(ws.workspace.id, 'Member')).id;
    // A knowledge document (docs/knowledge.md), stored as its ingest job would store it.
    f.documentId = (
      await storedDocument(
        { workspaceId: ws.workspace.id, projectId: ws.project.id },
        { text: 'Only mine: knowledge about herons.', name: 'Herons' },
      )
    ).documentId;
  }

  before(async () => {
    Object.assign(config.rateLimit, { readPerWindow: 1_000_000, writePerWindow: 1_000_000 });
    api = await startOAuthApi();
    a = await workspaceWithKey({ name: 'Caller' });
    b = await workspaceWithKey({ name: 'Victim' });
    const aToken = await oauthToken(api.url, a.workspace.id);
    await fixturesOf(a, aToken, fa);
    await fixturesOf(b, await oauthToken(api.url, b.workspace.id), fb);
    // A user of A who is also a Client of B: their A token must not reach B's objects either.
    const both = await member(a.workspace.id, 'Admin');
    await addMember({ workspaceId: b.workspace.id, user: both.id, role: 'Client', projectIds: [b.project.id] });
    callers.push({ name: 'API key', token: a.key }, { name: 'OAuth token', token: aToken });
    const { tokenFor, register } = await import('../oauth/support');
    const redirectUri = 'http://localhost:8765/callback';
    const reg = await register(api.url, {
      client_name: 'Two-workspace user',
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: 'none',
    });
    const t = await tokenFor(api.url, {
      clientId: reg.body.client_id,
      redirectUri,
      email: both.email,
      scope: 'read write webhooks:manage',
      access: 'full',
      workspace: a.workspace.id,
    });
    callers.push({ name: 'OAuth token of a Client member of B', token: t.access_token });
  });
  after(async () => {
    await terminateGenerationJobs([a.workspace.id, b.workspace.id]);
    Object.assign(config.rateLimit, previousLimits);
    api.restore();
    await api.close();
    console.log(`      cross-workspace probes: ${probes}`);
  });

  async function send(token: string, method: string, path: string, op: AnyOperation, input: Record<string, unknown>, params: string[]) {
    let p = path;
    const rest = { ...input };
    for (const name of params) {
      p = p.replace(`:${name}`, encodeURIComponent(String(rest[name])));
      delete rest[name];
    }
    const init: RequestInit = { method, headers: { Authorization: `Bearer ${token}` } };
    if (op.inputSource === 'query') {
      const q = new URLSearchParams(Object.entries(rest).map(([k, v]): [string, string] => [k, String(v)])).toString();
      if (q) p += `?${q}`;
    } else {
      init.headers = { ...(init.headers as Record<string, string>), 'Content-Type': 'application/json' };
      init.body = JSON.stringify(rest);
    }
    const res = await fetch(api.url + p, init);
    const body = (await res.json().catch(() => null)) as any;
    return { status: res.status, code: body?.error?.code as string | undefined };
  }

  it('probes every route and tool that takes an id, and only those', () => {
    const split = <T>(all: readonly T[], probed: readonly T[], name: (x: T) => string) => ({
      withIds: probed.length,
      withoutIds: all.filter((x) => !probed.includes(x)).map(name),
    });
    assert.deepEqual(
      {
        routes: split(allRoutes, routes, (r) => `${r.method} ${r.path}`),
        tools: split(mcpTools, tools, (t) => t.name),
      },
      {
        routes: {
          withIds: 42,
          withoutIds: [
            'GET /v1/health',
            'GET /v1/health/auth',
            'GET /v1/workspaces/me',
            'GET /v1/workspaces/context',
            'GET /v1/workspaces',
            'GET /v1/team',
            'GET /v1/projects',
            'GET /v1/post-statuses',
            'GET /v1/webhook-endpoints',
            'GET /v1/company-pages',
            'GET /v1/analytics/cross-workspace/overview',
          ],
        },
        tools: {
          withIds: 40,
          withoutIds: [
            'get_workspace',
            'list_workspaces',
            'list_projects',
            'list_post_statuses',
            'get_workspace_context',
            'list_team',
            'list_company_pages',
            'get_cross_workspace_analytics',
          ],
        },
      },
    );
    // Those left out take nothing that could name an object: no path parameter, and no field
    // spelled like an id in any case (`id`, `…Id`, `…_id`, `…Ids`), at any depth.
    const idLike = /ids?$/i;
    for (const r of allRoutes.filter((x) => !routes.includes(x))) {
      assert.deepEqual(r.params, [], `${r.method} ${r.path}`);
      assert.deepEqual(
        fieldNames(routeSchema(r)).filter((n) => idLike.test(n)),
        [],
        `${r.method} ${r.path}`,
      );
    }
    for (const t of mcpTools.filter((x) => !tools.includes(x)))
      assert.deepEqual(
        fieldNames(toolSchema(t)).filter((n) => idLike.test(n)),
        [],
        t.name,
      );
    // And every id the probed ones take is probed: it has a fixture, or names no workspace object.
    const unprobed = [
      ...routes.flatMap((r) => idInputs(routeSchema(r), r.params).map((id) => `${r.method} ${r.path} ${id}`)),
      ...tools.flatMap((t) => idInputs(toolSchema(t)).map((id) => `${t.name} ${id}`)),
    ].filter((where) => {
      const id = where.split(' ').at(-1)!;
      return fa[id] === undefined && !(id in NOT_OBJECT_IDS);
    });
    assert.deepEqual(unprobed, []);
  });

  for (const r of routes) {
    it(`${r.method} ${r.path}`, async () => {
      const bases = baseInputs(r.op, fa);
      assert.ok(
        bases.some((base) => idSlots(base, fa).length),
        `no valid input of ${r.op.name} carries a fixture id (of ${idInputs(routeSchema(r), r.params).join(', ')}): add a seed, variant or fixture`,
      );
      for (const base of bases) {
        for (const slot of idSlots(base, fa)) {
          const key = slot.at(-1)!;
          if (key === 'workspaceId') continue;
          for (const caller of callers) {
            // The probe means something only if the caller's own id is found (reads; a write would consume it).
            if (r.method === 'GET') {
              const own = await send(caller.token, r.method, r.path, r.op, base, r.params);
              assert.notEqual(own.status, 404, `${caller.name}: its own ${slot.join('.')} is not found`);
            }
            const victimBefore = await workspaceRows(b.workspace.id);
            const foreign = await send(caller.token, r.method, r.path, r.op, withAt(base, slot, fb[key]!), r.params);
            const missing = await send(caller.token, r.method, r.path, r.op, withAt(base, slot, neverExisted(fb[key]!)), r.params);
            probes += 2;
            const what = `${caller.name}: ${slot.join('.')} of another workspace`;
            assert.ok(foreign.status >= 400, `${what} answered ${foreign.status}`);
            assert.deepEqual(
              foreign,
              missing,
              `${what} answers ${JSON.stringify(foreign)}, a never-existing id ${JSON.stringify(missing)}`,
            );
            assert.deepEqual(await workspaceRows(b.workspace.id), victimBefore, `${what} changed the other workspace`);
          }
        }
      }
    });
  }

  describe('MCP tools', () => {
    let stack: McpStack;
    const agents: { name: string; client: Client }[] = [];
    before(async () => {
      stack = await startMcpStack();
      // The API key, and the OAuth token of A's user who is also a Client member of B.
      for (const caller of [callers[0]!, callers[2]!])
        agents.push({ name: caller.name, client: await connect('streamable', stack.mcpUrl, caller.token) });
    });
    after(async () => {
      await Promise.all(agents.map((x) => x.client.close()));
      await stack?.close();
    });

    const outcome = async (client: Client, name: string, args: Record<string, unknown>) => {
      const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
      return r.isError ? (r.structuredContent as { code: string }).code : 'ok';
    };

    for (const tool of tools) {
      it(tool.name, async () => {
        const op = tool.operation;
        const bases = op ? baseInputs(op, fa) : [{ workspaceId: fa.workspaceId }];
        assert.ok(
          bases.some((base) => idSlots(base, fa).length),
          `no valid input of ${tool.name} carries a fixture id (of ${idInputs(toolSchema(tool)).join(', ')}): add a seed, variant or fixture`,
        );
        for (const { name, client } of agents) {
          for (const base of bases) {
            for (const slot of idSlots(base, fa)) {
              const key = slot.at(-1)!;
              // B is a workspace this user belongs to: switching there is the user's right.
              if (key === 'workspaceId' && name !== 'API key') continue;
              // As on REST: the probe means something only if the caller's own id is found (reads).
              if (tool.annotations.readOnlyHint) {
                const own = await outcome(client, tool.name, base);
                assert.ok(
                  own !== 'not_found' && own !== 'invalid_request',
                  `${name}: ${tool.name} with its own ${slot.join('.')} answers ${own}`,
                );
              }
              const victimBefore = await workspaceRows(b.workspace.id);
              const foreign = await outcome(client, tool.name, withAt(base, slot, fb[key]!));
              const missing = await outcome(client, tool.name, withAt(base, slot, neverExisted(fb[key]!)));
              probes += 2;
              const what = `${name}: ${tool.name} ${slot.join('.')} of another workspace`;
              assert.notEqual(foreign, 'ok', `${what} succeeded`);
              assert.equal(foreign, missing, `${what} answers ${foreign}, a never-existing id ${missing}`);
              assert.deepEqual(await workspaceRows(b.workspace.id), victimBefore, `${what} changed the other workspace`);
            }
          }
        }
      });
    }
  });
});
