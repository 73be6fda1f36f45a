import { defineNoun } from '../registry';

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
});
