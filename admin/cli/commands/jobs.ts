import { type Args, defineNoun, flag } from '../registry';

// Pausing job processing during an incident (docs/generation.md "Pausing job processing"):
// new and waiting generation jobs stay QUEUED until `jobs resume`; running ones finish.

async function state() {
  const [{ jobProcessingState }, { db }] = await Promise.all([import('../../../lib/generation/pause'), import('../../../lib/db')]);
  const counts = await db()('jobs')
    .whereIn('status', ['QUEUED', 'RUNNING'])
    .groupBy('status')
    .select('status', db().raw('count(*)::int as n'));
  const by = Object.fromEntries(counts.map((c: { status: string; n: number }) => [c.status, c.n]));
  return { ...(await jobProcessingState(db())), queued: by.QUEUED ?? 0, running: by.RUNNING ?? 0 };
}

/** An optional --workspace; given blank, it is refused rather than read as "every workspace". */
const workspaceOf = (args: Args) => (args.has('workspace') ? args.need('workspace') : undefined);

export default defineNoun('jobs', 'Job processing (generation jobs) across the service.', {
  pause: {
    summary: 'Pause job processing: generation jobs stay QUEUED (running ones finish) until resumed. Survives restarts.',
    flags: { reason: { value: 'TEXT', help: 'why, shown in the retry error operators see in Temporal' } },
    async run(args) {
      const [{ setJobProcessingPaused }, { db }] = await Promise.all([import('../../../lib/generation/pause'), import('../../../lib/db')]);
      await setJobProcessingPaused(db(), true, args.string('reason') ?? null);
      return state();
    },
  },
  resume: {
    summary: 'Resume job processing: waiting jobs start within about 30 seconds (their next start attempt).',
    async run() {
      const [{ setJobProcessingPaused }, { db }] = await Promise.all([import('../../../lib/generation/pause'), import('../../../lib/db')]);
      await setJobProcessingPaused(db(), false);
      return state();
    },
  },
  status: {
    summary: 'Whether job processing is paused, and how many jobs are queued and running.',
    run: state,
  },
  // docs/generation.md "Spend and budgets": a job's reservation is replaced by its cost right
  // after its final state commits; a crash in between leaves it to the reconciler's pass.
  unsettled: {
    summary: 'Final jobs (DONE, FAILED, CANCELLED) whose AI spend is not settled yet: their reservations still count.',
    flags: {
      workspace: flag.onlyWorkspace,
      limit: flag.count('at most N jobs, oldest first (default 50; total counts them all)'),
    },
    examples: ['--workspace org_x --limit 10'],
    check(args) {
      workspaceOf(args);
      args.int('limit', 50, { min: 1, max: 1000 });
    },
    async run(args) {
      const [{ unsettledJobs }, { unsettledJobView }] = await Promise.all([import('../../controls'), import('../views')]);
      const workspaceId = workspaceOf(args);
      const found = await unsettledJobs({ workspaceId, limit: args.int('limit', 50) });
      return {
        workspaceId: workspaceId ?? null,
        total: found.total,
        reservedCents: found.reservedCents,
        jobs: found.jobs.map(unsettledJobView),
      };
    },
  },
  'settle-spend': {
    summary: "Settle now the final jobs whose AI spend is not settled, as the reconciler's pass does (a second run settles nothing).",
    flags: {
      workspace: flag.onlyWorkspace,
      limit: flag.count('at most N jobs, oldest first (default all)'),
    },
    examples: ['--workspace org_x'],
    check(args) {
      workspaceOf(args);
      args.int('limit', 0, { min: 1 });
    },
    async run(args) {
      const { settleUnsettledSpend } = await import('../../controls');
      return settleUnsettledSpend({ workspaceId: workspaceOf(args), limit: args.has('limit') ? args.int('limit', 0) : undefined });
    },
  },
});
