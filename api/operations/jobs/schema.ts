import { z } from 'zod';
import { component, dateTime, nullableDateTime } from '../../output';

// spec 2.12: the job, answered by every operation that queues one.

/** What an operation whose job reserves AI spend may answer besides (spec 7.2; lib/spend/). */
export const SPEND_ERRORS = ['spend_cap_exceeded', 'usage_limit_exceeded'] as const;

export const jobSchema = component(
  'Job',
  z
    .object({
      id: z.string().describe('job_*'),
      type: z.string(),
      status: z.enum(['QUEUED', 'RUNNING', 'DONE', 'FAILED', 'CANCELLED']),
      projectId: z.string().nullable(),
      startedAt: nullableDateTime,
      completedAt: nullableDateTime,
      progress: z
        .object({ progress: z.number().min(0).max(1), updatedAt: dateTime, message: z.string() })
        .strict()
        .nullable(),
      result: z.record(z.string(), z.unknown()).nullable(),
      errorCode: z.string().nullable(),
      errorMessage: z.string().nullable(),
      attemptCount: z.number().int(),
      estimatedCompletionMs: z.number().int(),
      createdAt: dateTime,
      updatedAt: dateTime,
    })
    .strict(),
);

export type Job = z.infer<typeof jobSchema>;
