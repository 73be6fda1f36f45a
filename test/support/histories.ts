import type { Client } from '@temporalio/client';
import { recordHistory } from '../../tooling/record-history';

// `RECORD_HISTORIES=1 npm test -- <files>` refreshes the recorded histories that the replay
// suite (test/replay) checks every later workflow change against.
export async function maybeRecordHistory(workflowId: string, name: string): Promise<void> {
  if (process.env.RECORD_HISTORIES === '1') await recordHistory(workflowId, name);
}

/**
 * The same for the workflow tier (test/workflows), whose workflows run on its own test server:
 * `RECORD_HISTORIES=1 npm test -- test/workflows` saves them under the given names.
 */
export async function maybeRecordTierHistory(ctx: { client: Client }, workflowId: string, name: string): Promise<void> {
  if (process.env.RECORD_HISTORIES === '1') await recordHistory(workflowId, name, undefined, ctx.client);
}
