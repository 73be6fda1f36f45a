import assert from 'node:assert/strict';
import { deal, specFiles, UNKNOWN_SECONDS } from '../../tooling/testShards';

// How `npm test` deals the spec files out to its parallel runs (tooling/test.ts).
describe('npm test: dealing spec files to runs (tooling/testShards.ts)', () => {
  it('gives every file to exactly one run, the longest first to the run with the least so far', () => {
    const seconds = { 'a.test.ts': 90, 'b.test.ts': 60, 'c.test.ts': 40, 'd.test.ts': 30, 'e.test.ts': 1 };
    const runs = deal(Object.keys(seconds), seconds, 2);
    assert.deepEqual(runs, [
      ['a.test.ts', 'd.test.ts'],
      ['b.test.ts', 'c.test.ts', 'e.test.ts'],
    ]);
    const load = runs.map((r) => r.reduce((s, f) => s + seconds[f as keyof typeof seconds], 0));
    assert.deepEqual(load, [120, 101]);
  });

  it('counts a file it has no figure for as UNKNOWN_SECONDS, and makes no empty run', () => {
    const runs = deal(['new.test.ts', 'old.test.ts'], { 'old.test.ts': UNKNOWN_SECONDS + 1 }, 3);
    assert.deepEqual(runs, [['old.test.ts'], ['new.test.ts']]);
  });

  it('finds every spec file of the suite, this one included, and nothing else', async () => {
    const files = await specFiles('test');
    assert.ok(files.includes('test/unit/testShards.test.ts'));
    assert.ok(files.every((f) => f.endsWith('.test.ts')));
    assert.ok(files.length > 100);
  });
});
