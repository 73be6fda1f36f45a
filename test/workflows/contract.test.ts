import assert from 'node:assert/strict';
import { Connection } from '@temporalio/client';
import { config } from '../../lib/config';
import { SEARCH, searchAttributeFlags, searchAttributeIndexedTypes } from '../../lib/searchAttributes';
import { devServerArgs } from '../../tooling/temporalBinary';
import { temporalAddress } from '../../lib/temporal/client';

// Search attributes are declared once (lib/searchAttributes.ts); the dev server's flags and the
// worker's registration derive from that declaration, and a server started from those flags
// knows every key with its type.
describe('Temporal contract: search attributes declared once', () => {
  it('the dev server gets one --search-attribute flag per declared key', () => {
    const args = devServerArgs({ port: 7233, uiPort: null, dbFile: null });
    const flags = args.flatMap((a, i) => (a === '--search-attribute' ? [args[i + 1]] : []));
    assert.deepEqual(flags, searchAttributeFlags());
    assert.deepEqual(
      flags.map((f) => f!.split('=')[0]).sort(),
      Object.values(SEARCH)
        .map((k) => k.name)
        .sort(),
    );
    assert.ok(flags.every((f) => f!.endsWith('=Keyword')));
  });

  /** The values the dev server is given as `--dynamic-config-value`. */
  const values = (args: string[]) => args.flatMap((a, i) => (a === '--dynamic-config-value' ? [args[i + 1]] : []));

  it('the dev server runs with task queue fairness on, unless a measurement of the queue before it asks otherwise', () => {
    assert.ok(values(devServerArgs({ port: 7233 })).includes('matching.enableFairness=true'));
    assert.ok(!values(devServerArgs({ port: 7233, fairness: false })).some((v) => v!.startsWith('matching.enableFairness')));
  });

  it('the dev server fires timers with few history workers, so a burst leaves its one store connection to dispatching', () => {
    const given = values(devServerArgs({ port: 7233 }));
    assert.ok(given.includes('history.timerProcessorSchedulerWorkerCount=8'));
    assert.ok(given.includes('history.transferProcessorSchedulerWorkerCount=8'));
  });

  it('the run’s dev server, started from those flags, has every key with its type', async () => {
    const connection = await Connection.connect({ address: temporalAddress() });
    try {
      const listed = await connection.operatorService.listSearchAttributes({ namespace: config.temporalNamespace });
      for (const [name, type] of Object.entries(searchAttributeIndexedTypes())) {
        assert.equal(listed.customAttributes?.[name], type, `${name} registered as ${type}`);
      }
    } finally {
      await connection.close();
    }
  });
});
