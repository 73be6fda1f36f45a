import assert from 'node:assert/strict';
import { z } from 'zod';
import { decodeCursor, encodeCursor, parseLimit } from '../../api/pagination';
import { validateIdempotencyKey } from '../../api/idempotency';
import { resolveVersion } from '../../api/versioning';
import { boundedText, isoDate, isoDateTime, parseInput } from '../../api/validation';
import { ApiError } from '../../lib/errors';

// The edge parsers of the REST chain as pure functions: which input maps to which spec 7.2 code.

function codeOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    assert.ok(err instanceof ApiError, `not an ApiError: ${String(err)}`);
    return `${err.status} ${err.code}`;
  }
}

async function asyncCodeOf(fn: () => Promise<unknown>): Promise<string | null> {
  try {
    await fn();
    return null;
  } catch (err) {
    assert.ok(err instanceof ApiError, `not an ApiError: ${String(err)}`);
    return `${err.status} ${err.code}`;
  }
}

describe('edge parsers', () => {
  it('parseLimit: default, clamp, and 400 bad_pagination', () => {
    assert.equal(parseLimit(undefined), 50);
    assert.equal(parseLimit(''), 50);
    assert.equal(parseLimit('1'), 1);
    assert.equal(parseLimit('200'), 200);
    assert.equal(parseLimit('201'), 200);
    assert.equal(parseLimit('99999999999999999999'), 200);
    assert.equal(parseLimit(7), 7);
    for (const bad of ['abc', '0', '-3', '1.5', '1e3', ['1', '2'], {}])
      assert.equal(
        codeOf(() => parseLimit(bad)),
        '400 bad_pagination',
        JSON.stringify(bad),
      );
  });

  it('cursors: round trip under the same filters, 400 bad_cursor otherwise', async () => {
    const pos = { createdAt: '2026-01-01T00:00:00.000Z', id: 'post_a' };
    const c = encodeCursor(pos, { projectId: 'p', status: 'draft' });
    assert.deepEqual(
      await decodeCursor(c, { status: 'draft', projectId: 'p', dateFrom: undefined }),
      pos,
      'undefined filters and key order do not matter',
    );
    assert.equal(await decodeCursor(undefined, {}), null);
    assert.equal(await decodeCursor('', {}), null);
    assert.equal(await asyncCodeOf(() => decodeCursor(c, { projectId: 'p' })), '400 bad_cursor');
    assert.equal(await asyncCodeOf(() => decodeCursor(c, { projectId: 'q', status: 'draft' })), '400 bad_cursor');
    assert.equal(await asyncCodeOf(() => decodeCursor(`${c}x`, { projectId: 'p', status: 'draft' })), '400 bad_cursor');
    assert.equal(await asyncCodeOf(() => decodeCursor('x.y', {})), '400 bad_cursor');
  });

  it('validateIdempotencyKey: 1 to 64 of A-Za-z0-9_-', () => {
    assert.equal(
      codeOf(() => validateIdempotencyKey('a')),
      null,
    );
    assert.equal(
      codeOf(() => validateIdempotencyKey('A_b-9'.repeat(12) + 'abcd')),
      null,
    );
    for (const bad of ['', 'x'.repeat(65), 'a b', 'a/b', 'é'])
      assert.equal(
        codeOf(() => validateIdempotencyKey(bad)),
        '400 invalid_request',
        bad,
      );
  });

  it('resolveVersion: current by default, named versions, 400 version_unsupported', () => {
    assert.equal(resolveVersion(undefined), '2026-08-10');
    assert.equal(resolveVersion('  '), '2026-08-10');
    assert.equal(resolveVersion('2026-08-01'), '2026-08-01');
    assert.equal(resolveVersion(' 2026-08-10 '), '2026-08-10');
    assert.equal(
      codeOf(() => resolveVersion('2026-08-11')),
      '400 version_unsupported',
    );
  });

  it('isoDateTime: real date-times only, offset optional, bare dates refused', () => {
    for (const ok of [
      '2026-12-01T09:00:00Z',
      '2026-12-01T09:00',
      '2026-12-01T09:00:00.123+05:30',
      '2026-12-01T23:59:59-0800',
      '2028-02-29T00:00:00Z',
    ]) {
      assert.equal(isoDateTime.safeParse(ok).success, true, ok);
    }
    for (const bad of [
      '2026-12-01',
      '2026-02-29T00:00:00Z',
      '2026-02-30T09:00:00Z',
      '2026-04-31T09:00:00Z',
      '2026-13-01T09:00:00Z',
      '2026-12-01T24:00:00Z',
      '2026-12-01T09:60:00Z',
      '2026-12-01T09:00:61Z',
      '2026-12-01T09:00:00+25:00',
      '0000-01-01T00:00:00Z',
      'tomorrow',
    ]) {
      assert.equal(isoDateTime.safeParse(bad).success, false, bad);
    }
  });

  it('isoDate: real calendar dates only', () => {
    assert.equal(isoDate.safeParse('2028-02-29').success, true);
    for (const bad of ['2026-02-29', '2026-02-30', '2026-00-10', '2026-01-32', '2026-1-1', '2026-01-01T00:00:00Z'])
      assert.equal(isoDate.safeParse(bad).success, false, bad);
  });

  it('parseInput: a missing projectId or source field is 400 invalid_request (spec 7.2); other missing fields and bad shapes stay 422', () => {
    const schema = z
      .object({
        projectId: z.string().min(1),
        content: z.string(),
        source: z
          .object({ type: z.enum(['text']), text: z.string() })
          .strict()
          .optional(),
      })
      .strict();
    assert.equal(
      codeOf(() => parseInput(schema, { content: 'x' }, 'body')),
      '400 invalid_request',
    );
    assert.equal(
      codeOf(() => parseInput(schema, {}, 'body')),
      '400 invalid_request',
      'the missing projectId wins over the missing content',
    );
    assert.equal(
      codeOf(() => parseInput(schema, { projectId: 'p', content: 'x', source: { type: 'text' } }, 'body')),
      '400 invalid_request',
    );
    assert.equal(
      codeOf(() => parseInput(schema, { projectId: 'p' }, 'body')),
      '422 unprocessable',
      'content is not a field the spec names',
    );
    assert.equal(
      codeOf(() => parseInput(schema, { projectId: 7, content: 'x' }, 'body')),
      '422 unprocessable',
      'present with a bad type',
    );
    assert.equal(
      codeOf(() => parseInput(schema, { projectId: 'p', content: 'x', source: { type: 'video', text: 't' } }, 'body')),
      '422 unprocessable',
      'a bad enum',
    );
    assert.equal(
      codeOf(() => parseInput(schema, { projectId: 'p', content: 'x', source: 'text' }, 'body')),
      '422 unprocessable',
      'a bad shape',
    );
  });

  it('parseInput: query issues are 400, body issues 422, oversized text 413 first', () => {
    const schema = z.object({ a: z.string(), text: boundedText(5, 'text').optional() }).strict();
    assert.equal(
      codeOf(() => parseInput(schema, {}, 'query')),
      '400 invalid_request',
    );
    assert.equal(
      codeOf(() => parseInput(schema, {}, 'body')),
      '422 unprocessable',
    );
    assert.equal(
      codeOf(() => parseInput(schema, { text: 'toolong' }, 'body')),
      '413 payload_too_large',
      'the size wins over the missing field',
    );
    assert.deepEqual(parseInput(schema, { a: 'x', text: 'abc' }, 'body'), { a: 'x', text: 'abc' });
    assert.equal(
      codeOf(() => parseInput(schema, { a: 'x\u0000' }, 'query')),
      '400 invalid_request',
    );
    assert.equal(
      codeOf(() => parseInput(z.object({ a: z.array(z.string()) }), { a: ['ok', '\u0000'] }, 'body')),
      '422 unprocessable',
    );
    assert.equal(
      codeOf(() => parseInput(z.record(z.string(), z.string()), { 'k\u0000': 'v' }, 'body')),
      '422 unprocessable',
    );
    // A lone surrogate is not well-formed Unicode: Postgres's JSON types refuse it (found by
    // the fuzz suite as a 500 on image generation); a surrogate pair is a character like any other.
    assert.equal(
      codeOf(() => parseInput(z.object({ p: z.string() }), { p: '\ud800' }, 'body')),
      '422 unprocessable',
    );
    assert.equal(
      codeOf(() => parseInput(z.object({ p: z.string() }), { p: 'x\udc00y' }, 'query')),
      '400 invalid_request',
    );
    assert.deepEqual(parseInput(z.object({ p: z.string() }), { p: 'ok \ud83d\ude00' }, 'body'), { p: 'ok \ud83d\ude00' });
  });
});
