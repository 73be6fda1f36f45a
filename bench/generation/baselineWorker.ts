// The generation bench's baseline worker (baseline.ts, bench/harness/baselineWorker.ts): the
// steps of the plan (plan.ts) replayed over a pool of the service worker's size.

import { runBaselineWorker } from '../harness/baselineWorker';
import type { BareJobActivities } from './baselineWorkflows';
import { bareChild } from './plan';

const { taskQueue, plan, replay } = bareChild();
const steps = new Map(plan.activities.map((a) => [a.type, a.statements]));
const activities: BareJobActivities = { replayStep: async ({ type, id }) => void (await replay(steps.get(type) ?? [], id)) };

const workflowsUrl = new URL('./baselineWorkflows.ts', import.meta.url);
await runBaselineWorker({ taskQueue, bundlePath: process.env.BENCH_GEN_BASELINE_BUNDLE_PATH, workflowsUrl, activities });
