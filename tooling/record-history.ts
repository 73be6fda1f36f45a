// Saves a workflow's event history for replay tests: `npm run record-history -- <workflowId> [name]`
// writes test/replay/histories/<name>.json. Record from a run of the current workflow code; the
// replay suite then proves later code changes still replay it (CONVENTIONS.md habit 8).
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { temporalClient, closeTemporalClient } from '../lib/temporal/client';

/** `client` defaults to the configured server's; the workflow tier passes its test server's. */
export async function recordHistory(workflowId: string, name: string, runId?: string, client?: Client): Promise<string> {
  client ??= await temporalClient();
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const file = path.resolve(import.meta.dirname, '..', 'test', 'replay', 'histories', `${name}.json`);
  // Proto3 JSON, the form the replayer and `temporal workflow show --output json` use.
  await writeFile(file, historyToJSON(history));
  return file;
}

if (process.argv[1] && import.meta.filename === path.resolve(process.argv[1])) {
  const [workflowId, name] = process.argv.slice(2);
  if (!workflowId) {
    console.error('usage: npm run record-history -- <workflowId> [name]');
    process.exit(2);
  }
  recordHistory(workflowId, name ?? workflowId)
    .then((file) => {
      console.log(file);
      return closeTemporalClient();
    })
    .catch((err) => {
      console.error(err.message);
      process.exit(1);
    });
}
