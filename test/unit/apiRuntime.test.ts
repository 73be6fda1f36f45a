import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { API_NODE_ARGS } from '../../lib/apiRuntime';

// lib/apiRuntime.ts: every launcher of the API process passes its Node options. package.json
// spells them out (a shell line cannot import the module), so this keeps the two from drifting.

describe('the API process Node options (lib/apiRuntime.ts)', () => {
  it('npm run start:api passes each of them before the entry', async () => {
    const pkg = JSON.parse(await readFile(path.resolve(import.meta.dirname, '../../package.json'), 'utf8'));
    const line: string = pkg.scripts['start:api'];
    const entry = line.indexOf('api/main.ts');
    assert.ok(entry > 0, line);
    for (const arg of API_NODE_ARGS) {
      const at = line.indexOf(` ${arg} `);
      assert.ok(at >= 0 && at < entry, `start:api lacks ${arg} before its entry: ${line}`);
    }
  });

  it('are options this Node accepts', async () => {
    const { execFileSync } = await import('node:child_process');
    assert.equal(execFileSync(process.execPath, [...API_NODE_ARGS, '-e', 'process.stdout.write("ok")']).toString(), 'ok');
  });
});
