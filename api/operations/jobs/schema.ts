import { z } from 'zod';
// spec 2.12: the job, answered by every operation that queues one (lib/presenters/jobs.ts).

/** What an operation whose job reserves AI spend may answer besides (spec 7.2; lib/spend/). */
export const SPEND_ERRORS = ['spend_cap_exceeded', 'usage_limit_exceeded'] as const;

export { jobSchema, type Job } from '../../../lib/presenters/jobs';

export const id = z.string().min(1).max(100);
export const getJobInput = z.object({ jobId: id }).strict();

export const cancelJobInput = z.object({ jobId: id }).strict();
