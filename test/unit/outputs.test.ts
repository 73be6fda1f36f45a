import assert from 'node:assert/strict';
import { z } from 'zod';
import { TOOLS } from '../../api/mcp/tools/index';
import { defineOperation, type AnyOperation } from '../../api/operation';
import { type Note, noteSchema } from '../../api/operations/notes/schema';
import { single } from '../../api/output';
import { routeTable } from '../../api/rest/adapter';
import { restRouter } from '../../api/rest/routes';

// CONVENTIONS.md habit 13 (issue 28 section 1): every operation declares its output beside its
// input, and the handler's return type is inferred from it. The type-level half of this file is
// checked by `npm run lint` (tsc): each @ts-expect-error below must stay an error, so a
// compiler that stopped refusing a drifted presenter fails the lint.

function operations(): AnyOperation[] {
  const ops = new Set<AnyOperation>(routeTable(restRouter()).map((r) => r.op));
  for (const tool of TOOLS) if (tool.operation) ops.add(tool.operation);
  return [...ops];
}

const noteFields: Note = {
  id: 'note_1',
  projectId: 'proj_1',
  content: 'x',
  createdAt: '2025-01-01T00:00:00.000Z',
  slot: null,
  folderId: null,
  updatedAt: '2025-01-01T00:00:00.000Z',
};

/** A presenter typed with its schema's inferred type, as lib/presenters/posts.ts and the others are. */
function presentNoteWithAnExtraField(): Note {
  return {
    ...noteFields,
    // @ts-expect-error a field the output schema lacks is refused where the presenter writes it
    surprise: 1,
  };
}

export const driftedHandler = defineOperation({
  name: 'test.drift',
  summary: 'a handler whose answer drifted from its output',
  kind: 'read',
  scopes: 'any',
  clientRole: 'allow',
  inputSource: 'query',
  input: z.object({}).strict(),
  output: single(noteSchema),
  // @ts-expect-error `content` is a string in the output schema: the handler's return type is inferred from it
  handler: async () => ({ data: { ...noteFields, content: 1 } }),
});

describe('operation outputs (CONVENTIONS.md habit 13)', () => {
  it('every operation of both doors declares a zod output schema whose top level is an object', () => {
    const ops = operations();
    assert.ok(ops.length > 40, `found ${ops.length} operations`);
    for (const op of ops) {
      assert.ok(op.output instanceof z.ZodType, `${op.name} declares an output`);
      // MCP 2025-06-18 tools/list: an outputSchema is a JSON Schema of type object.
      assert.equal(z.toJSONSchema(op.output, { io: 'output', unrepresentable: 'any' }).type, 'object', op.name);
    }
  });

  it("refuses, at run time too, a presenter's field its schema lacks", () => {
    const output = single(noteSchema);
    assert.ok(output.safeParse({ data: noteFields }).success);
    const drifted = output.safeParse({ data: presentNoteWithAnExtraField() });
    assert.equal(drifted.success, false);
    assert.match(JSON.stringify(drifted.error?.issues), /surprise/);
  });
});
