import { recordHistory } from '../../scripts/record-history';

// `RECORD_HISTORIES=1 npm test -- <files>` refreshes the recorded histories that the replay
// suite (test/replay) checks every later workflow change against.
export async function maybeRecordHistory(workflowId: string, name: string): Promise<void> {
  if (process.env.RECORD_HISTORIES === '1') await recordHistory(workflowId, name);
}
