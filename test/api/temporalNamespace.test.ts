import assert from 'node:assert/strict';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { registerSearchAttributes } from '../../lib/temporal/client';
import { launch } from '../../tooling/launcher';
import { freePort } from '../../tooling/ports';
import { startApiProcess } from '../support/foundation';
import { waitFor } from '../support/wait';

// docs/operations.md "Search attributes": the namespace and its search attributes are set up
// before any API process starts. An API started against a namespace without them would have
// every publish workflow start refused ("no mapping defined for search attribute WorkspaceId")
// and leave each scheduled post to the reconciler; it stops at start instead, naming what is
// missing. A namespace of its own on the run's Temporal, registered here without attributes.

/** api/main.ts until it exits (or `timeoutMs` passes), with its exit code and output. */
async function runApiUntilExit(env: Record<string, string>, timeoutMs = 45_000): Promise<{ code: number | null; output: string }> {
  const [port, mcpPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const api = await launch({
    kind: 'api',
    env: { PORT: String(port), MCP_PORT: String(mcpPort), METRICS_PORT: String(metricsPort), ...env },
    keepOutput: true,
  });
  const timer = setTimeout(() => void api.kill(), timeoutMs);
  const { code } = await api.exited;
  clearTimeout(timer);
  return { code, output: api.output.join('\n') };
}

describe('API start against a Temporal namespace that is not set up', function () {
  this.timeout(120_000);
  const namespace = `no-attributes-${process.pid}-${Date.now()}`;
  let connection: Connection;

  before(async () => {
    connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
    await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    // The frontend answers for a new namespace once its namespace cache has it.
    await waitFor(
      () =>
        connection.operatorService.listSearchAttributes({ namespace }).then(
          () => true,
          () => false,
        ),
      30_000,
      'the new namespace',
      250,
    );
  });
  after(async () => {
    await connection?.close();
  });

  it('refuses to start when the namespace does not exist, naming it', async () => {
    const { code, output } = await runApiUntilExit({ TEMPORAL_NAMESPACE: `absent-${namespace}` });
    assert.equal(code, 1, output);
    assert.match(output, new RegExp(`there is no namespace \\\\"absent-${namespace}\\\\"`));
  });

  it('refuses to start without the search attributes, naming every one; starts once they are registered', async () => {
    const { code, output } = await runApiUntilExit({ TEMPORAL_NAMESPACE: namespace });
    assert.equal(code, 1, output);
    assert.match(output, /lacks the search attributes WorkspaceId, ProjectId, PostId, JobId, EndpointId/);
    assert.doesNotMatch(output, /api listening/);

    // The operator-service registration the worker and `npm run cluster` use.
    assert.deepEqual(await registerSearchAttributes(connection, namespace), ['WorkspaceId', 'ProjectId', 'PostId', 'JobId', 'EndpointId']);
    assert.deepEqual(await registerSearchAttributes(connection, namespace), [], 'nothing left to register');
    const api = await startApiProcess({ TEMPORAL_NAMESPACE: namespace });
    try {
      assert.equal((await fetch(`${api.url}/v1/health`)).status, 200);
    } finally {
      await api.close();
    }
  });
});
