import type { Priority } from '@temporalio/common';
import { config } from '../../config';
import { workPriority, type WorkKind } from '../contracts/priority';

// The one place a start gets its task queue priority (lib/temporal/contracts/priority.ts): every
// starter of lib/temporal/start/ spreads this into its options. Activities and children inherit
// the workflow's priority unless they set their own (Temporal's Priority: an unset field
// inherits), so keying the start keys the whole run.

/** `{ priority }` for a start of `kind` for the workspace (null: the whole deployment), or nothing with TEMPORAL_FAIRNESS=false. */
export function startPriority(kind: WorkKind, workspaceId: string | null): { priority?: Priority } {
  return config.temporalFairness ? { priority: workPriority(kind, workspaceId) } : {};
}
