import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { config } from '../../lib/config';
import { randomBase62 } from '../../lib/ids';
import { clusterDatabase, ClusterRunningError, lockClusterDatabases } from '../../tooling/temporalCluster';
import { waitFor } from '../support/wait';

// `npm run cluster` on databases a running cluster holds (docs/operations.md "The cluster tier"):
// the lock on the Temporal databases refuses the second start with a message naming them and
// the holder, and is gone with its holder, however that ended. No cluster binary is needed:
// the lock is taken before anything else happens.

describe('cluster lock on the Temporal databases', function () {
  this.timeout(60_000);

  it('refuses a second holder of the same databases, naming them and the first; another name is free; release frees it', async () => {
    const db = clusterDatabase(config.databaseUrl, `temporal_locktest_${randomBase62(8).toLowerCase()}`);
    const first = await lockClusterDatabases(db, () => undefined);
    try {
      await assert.rejects(
        lockClusterDatabases(db, () => undefined),
        (err: unknown) => {
          assert.ok(err instanceof ClusterRunningError, String(err));
          assert.match(err.message, new RegExp(`already running on the databases ${db.name} and ${db.visibilityName} of `));
          assert.match(err.message, new RegExp(`temporal-cluster pid ${process.pid}, up since `));
          return true;
        },
      );
      const other = await lockClusterDatabases({ ...db, name: `${db.name}_other`, visibilityName: `${db.name}_other_visibility` });
      await other.release();
    } finally {
      await first.release();
    }
    const again = await lockClusterDatabases(db, () => undefined);
    await again.release();
  });

  it('a holder killed without a word (SIGKILL) leaves no lock behind', async () => {
    const db = clusterDatabase(config.databaseUrl, `temporal_locktest_${randomBase62(8).toLowerCase()}`);
    const holder = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `const { lockClusterDatabases, clusterDatabase } = await import('./tooling/temporalCluster.ts');
         await lockClusterDatabases(clusterDatabase(process.env.DATABASE_URL, ${JSON.stringify(db.name)}));
         console.log('locked'); setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'], env: process.env },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout!.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
        holder.once('exit', (code) => reject(new Error(`the holder exited (${code}) before it locked`)));
      });
      await assert.rejects(
        lockClusterDatabases(db, () => undefined),
        ClusterRunningError,
      );
      holder.kill('SIGKILL');
      const lock = await waitFor(
        () =>
          lockClusterDatabases(db, () => undefined).catch((err: unknown) =>
            err instanceof ClusterRunningError ? null : Promise.reject(err),
          ),
        20_000,
        'the lock to go with its holder',
        200,
      );
      await lock.release();
    } finally {
      holder.kill('SIGKILL');
    }
  });
});
