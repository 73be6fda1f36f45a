import assert from 'node:assert/strict';
import pg from 'pg';
import { db, isoOf, readPrepared, shapedRead, TIMESTAMPS_AS_ISO, timestamptzAsIso } from '../../lib/db';

// lib/db.ts TIMESTAMPS_AS_ISO: a timestamptz cut from Postgres' text must be the very string
// toISOString() makes of the Date pg parses from the same text (the post list's instants).

const parseAsPg = pg.types.getTypeParser(1184, 'text') as (text: string) => Date | number;

describe('lib/db timestamptz as ISO strings', () => {
  it('matches the Date pg parses, formatted with toISOString, for every millisecond and sub-millisecond digits', () => {
    for (let us = 0; us < 1_000_000; us += 997) {
      const fraction = String(us).padStart(6, '0').replace(/0+$/, '');
      for (const text of [
        `2026-11-26 09:44:58${fraction ? `.${fraction}` : ''}+00`,
        `0050-02-28 23:59:59${fraction ? `.${fraction}` : ''}+00`,
      ]) {
        assert.equal(timestamptzAsIso(text), (parseAsPg(text) as Date).toISOString(), text);
      }
    }
    for (let ms = 0; ms < 1000; ms++) {
      const text = `1999-12-31 23:59:59.${String(ms).padStart(3, '0').replace(/0+$/, '') || '0'}+00`;
      assert.equal(timestamptzAsIso(text), (parseAsPg(text) as Date).toISOString(), text);
    }
  });

  it('leaves other shapes to pg: an offset, BC, a five-digit year, infinity', () => {
    for (const text of [
      '2026-11-26 15:14:58.123+05:30',
      '2026-11-26 04:44:58-05',
      '0044-03-15 12:00:00+00 BC',
      '10000-01-01 00:00:00+00',
    ]) {
      const cut = timestamptzAsIso(text);
      assert.ok(cut instanceof Date, text);
      assert.equal(isoOf(cut), (parseAsPg(text) as Date).toISOString(), text);
    }
    assert.equal(timestamptzAsIso('infinity'), Infinity);
  });

  it('reads the same instants from Postgres as the Date path, in UTC and in another session time zone', async () => {
    const sql = `select v from (values ('2026-11-26T09:44:58.12Z'::timestamptz), ('2026-11-26T09:44:58Z'), ('2026-03-29T01:30:00.999Z'),
      ('0050-01-01T00:00:00.5Z'), ('1969-12-31T23:59:59.001Z'), ('2026-11-26T09:44:58.123456Z')) as t(v)`;
    await db().transaction(async (trx) => {
      for (const zone of ['UTC', 'Asia/Kolkata', 'America/St_Johns']) {
        await trx.raw(`set local time zone '${zone}'`);
        const asDates = (await trx.raw(sql)).rows as Array<{ v: Date }>;
        const asText = (await trx.raw(sql).options({ types: TIMESTAMPS_AS_ISO })).rows as Array<{ v: Date | string }>;
        assert.deepEqual(
          asText.map((r) => isoOf(r.v)),
          asDates.map((r) => r.v.toISOString()),
          zone,
        );
        if (zone === 'UTC') assert.ok(asText.every((r) => typeof r.v === 'string'));
      }
    });
  });

  it('readPrepared: a knex read as a named statement, twice on the pool; refused inside a transaction', async () => {
    const query = () => db().select(db().raw(`'2026-11-26T09:44:58.12Z'::timestamptz as v`));
    for (let i = 0; i < 2; i++)
      assert.deepEqual(await readPrepared(query(), { types: TIMESTAMPS_AS_ISO }), [{ v: '2026-11-26T09:44:58.120Z' }]);
    await db().transaction(async (trx) => {
      await assert.rejects(readPrepared(trx.select(trx.raw('1 as one'))), /not in a transaction/);
    });
  });

  it("readPrepared: Postgres' error reaches the caller and the connection goes back to the pool", async () => {
    const pool = (db().client as unknown as { pool: { numUsed(): number } }).pool;
    const usedBefore = pool.numUsed();
    // More failures than the pool has connections: a connection kept by a failed read would
    // leave the last ones waiting for the acquire timeout instead of failing at once.
    for (let i = 0; i < 12; i++)
      await assert.rejects(readPrepared(db().select(db().raw('1 / 0 as v'))), (err: { code?: string }) => err.code === '22012');
    assert.equal(pool.numUsed(), usedBefore);
    assert.deepEqual(await readPrepared(db().select(db().raw('1 as one'))), [{ one: 1 }]);
  });

  it("shapedRead: the text knex compiles for the shape, bound to each call's values in place, list elements included", async () => {
    type Shape = { ids: number; since: boolean; limit: number };
    type Values = { workspace: string; ids: readonly string[]; since: Date | undefined };
    // The same query written with the values themselves: what the shaped read must equal.
    const write = (shape: Shape, v: (name: keyof Values, i?: number) => unknown) => {
      const q = db()('posts')
        .where('workspace_id', v('workspace') as string)
        .whereIn(
          'id',
          Array.from({ length: shape.ids }, (_, i) => v('ids', i) as string),
        )
        .whereNot('status', 'draft');
      if (shape.since) q.where('created_at', '>=', v('since') as Date);
      return q.orderBy('id').limit(shape.limit).select('id');
    };
    let builds = 0;
    const read = shapedRead((shape: Shape, param: (name: keyof Values, index?: number) => string) => {
      builds++;
      return write(shape, param);
    });
    const calls: Array<[Shape, Values]> = [
      [
        { ids: 2, since: false, limit: 10 },
        { workspace: 'org_a', ids: ['post_1', 'post_2'], since: undefined },
      ],
      [
        { ids: 2, since: false, limit: 10 },
        { workspace: 'org_b', ids: ['post_3', 'post_4'], since: undefined },
      ],
      [
        { ids: 1, since: true, limit: 5 },
        { workspace: 'org_a', ids: ['post_5'], since: new Date('2026-11-26T09:44:58Z') },
      ],
    ];
    for (const [shape, values] of calls) {
      const expected = write(shape, (name, i) => (i === undefined ? values[name] : (values[name] as readonly string[])[i]))
        .toSQL()
        .toNative();
      assert.deepEqual(read(shape, values), { sql: expected.sql, bindings: expected.bindings });
    }
    assert.equal(builds, 2, 'one build per shape');
    assert.deepEqual(await readPrepared(read(calls[0]![0], calls[0]![1])), []);
  });
});
