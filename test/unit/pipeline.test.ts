import assert from 'node:assert/strict';
import { z } from 'zod';
import type { AuthContext } from '../../api/auth/context';
import { defineOperation } from '../../api/operation';
import { OPERATION_STEPS, runOperation, scopeRules, type OperationCall } from '../../api/pipeline/index';
import { ApiError } from '../../lib/errors';
import { randomBase62 } from '../../lib/ids';

// The one pipeline of both doors (api/pipeline): its steps, their order, and the scope rules
// a door may add to or put in place of an operation's own.

const op = defineOperation({
  name: 'test.write',
  summary: 'test',
  kind: 'write',
  scopes: { allOf: ['posts:write'] },
  clientRole: 'deny',
  inputSource: 'body',
  input: z.object({ projectId: z.string() }).strict(),
  output: z.object({ data: z.object({ projectId: z.string() }).strict() }).strict(),
  handler: async (_ctx, input) => ({ data: input }),
});

function auth(over: Partial<AuthContext> = {}): AuthContext {
  return {
    principal: { type: 'api_key', id: 'key_x', scopes: [] },
    workspaceId: `org_${randomBase62(12)}`,
    gatingPlan: 'BUSINESS',
    scopes: new Set(['posts:write']),
    role: 'admin',
    projectIds: null,
    reach: 'member',
    ...over,
  };
}

function call(a: AuthContext, over: Partial<OperationCall> = {}): OperationCall & { inputRead: () => boolean } {
  let read = false;
  return {
    op,
    requestId: 'req_x',
    authenticate: async () => a,
    input: () => {
      read = true;
      return { projectId: 'proj_1' };
    },
    idempotencyScope: { operation: 'TEST', hashSubject: 'test' },
    inputRead: () => read,
    ...over,
  };
}

async function refusal(c: OperationCall): Promise<string> {
  try {
    await runOperation(c);
  } catch (err) {
    assert.ok(err instanceof ApiError);
    return `${err.status} ${err.code}`;
  }
  return 'ok';
}

describe('the operation pipeline', () => {
  it('runs the named steps in the order of ARCHITECTURE.md', () => {
    assert.deepEqual(
      OPERATION_STEPS.map((s) => s.name),
      ['version', 'authenticate', 'rate limit', 'plan/role', 'scopes', 'validate', 'idempotency', 'handler'],
    );
  });

  it('answers through the handler and reports the version and the bucket it used', async () => {
    const r = await runOperation(call(auth()));
    assert.deepEqual(r.body, { data: { projectId: 'proj_1' } });
    assert.equal(r.replayed, false);
    assert.ok(r.state.version);
    assert.ok(r.state.rateLimit && r.state.rateLimit.remaining >= 0);
  });

  it('refuses role and scopes before reading the input, and a bad Idempotency-Key before running anything', async () => {
    for (const [c, expected] of [
      [call(auth({ role: 'client' })), '403 forbidden_project'],
      [call(auth({ scopes: new Set(['posts:read']) })), '403 scope_missing'],
      [call(auth(), { versionHeader: '1999-01-01' }), '400 version_unsupported'],
    ] as const) {
      assert.equal(await refusal(c), expected);
      assert.equal(c.inputRead(), false, expected);
    }
    let ran = false;
    const empty = call(auth(), {
      idempotencyKey: '',
      op: {
        ...op,
        handler: async () => {
          ran = true;
          return {};
        },
      },
    });
    assert.equal(await refusal(empty), '400 invalid_request');
    assert.equal(ran, false);
  });

  it("a door adds its scope to the operation's rule, or replaces it", () => {
    const v = '2026-01-01' as never;
    assert.deepEqual(scopeRules(op, v), [{ allOf: ['posts:write'] }]);
    assert.deepEqual(scopeRules(op, v, { rule: { allOf: ['jobs:read'] } }), [{ allOf: ['posts:write'] }, { allOf: ['jobs:read'] }]);
    assert.deepEqual(scopeRules(op, v, { rule: { allOf: ['posts:generate'] }, replace: true }), [{ allOf: ['posts:generate'] }]);
  });
});
