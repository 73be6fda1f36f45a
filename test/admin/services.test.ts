// issue 29 item 6: bin/admin finds the services the way `npm start` does (lib/config.ts
// serviceAddresses). Beside a stack on other ports, an operator sets the same port variables
// npm start was given, not each service's address: TEMPORAL_PORT, NETWORK_SIMULATOR_PORT and
// LLM_STUB_PORT locate the embedded Temporal, the network simulator and the LLM simulator.

import assert from 'node:assert/strict';
import { config } from '../../lib/config';
import { temporalClient, workflowIds } from '../../lib/temporal/client';
import { workspaceWithKey } from '../support/factories';
import { connectedPersonalProject } from '../support/network';
import { fails, ok } from '../support/admin';

/** The environment of a shell beside the test run's services as if npm start had run them on their ports. */
function besideTheStack(): NodeJS.ProcessEnv {
  const port = (address: string) => new URL(address.includes('://') ? address : `tcp://${address}`).port;
  return {
    TEMPORAL_ADDRESS: '',
    TEMPORAL_PORT: port(config.temporalAddress!),
    NETWORK_API_URL: '',
    NETWORK_SIMULATOR_PORT: port(config.network.apiUrl!),
    LLM_BASE_URL: '',
    LLM_STUB_PORT: port(config.llm.baseUrl!),
  };
}

describe('bin/admin finds the stack from the port variables npm start uses', function () {
  this.timeout(120_000);

  it('post create --scheduled-for reaches Temporal on TEMPORAL_PORT and the simulator on NETWORK_SIMULATOR_PORT', async () => {
    const ws = await workspaceWithKey({ projects: 0 });
    const { project } = await connectedPersonalProject(ws.workspace.id);
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const [post] = await ok(
      ['post', 'create', '--workspace', ws.workspace.id, '--project', project.id, '--content', 'Found by port', '--scheduled-for', at],
      { env: besideTheStack() },
    );
    assert.equal(post.status, 'scheduled');
    const described = await (await temporalClient()).workflow.getHandle(workflowIds.publish(post.id)).describe();
    assert.equal(described.status.name, 'RUNNING');
  });

  it('llm state reaches the LLM simulator on LLM_STUB_PORT; with LLM_WRITER=builtin there is none to script', async () => {
    const state = await ok(['llm', 'state'], { env: besideTheStack() });
    assert.deepEqual(state.pendingFailures, []);
    await fails(['llm', 'state'], 1, /LLM_WRITER=builtin: generation calls no LLM/, {
      env: { ...besideTheStack(), LLM_WRITER: 'builtin' },
    });
  });
});
