import { z } from 'zod';
import { dateTime, objectComponent } from './output';

// spec 2.16: usage and limits.

const meter = { percentUsed: z.number().int().min(0).max(100), unlimited: z.boolean() };

export const usageSchema = objectComponent('Usage', {
  plan: z.string(),
  canGenerate: z.boolean(),
  blockedBy: z.enum(['weekly_ai_budget', 'daily_api_spend_cap']).nullable(),
  ai: z
    .object({
      scope: z.string(),
      ...meter,
      enforcement: z.enum(['off', 'shadow', 'warn', 'block']),
      weekStart: z.string().describe('date'),
      resetsAt: dateTime,
      project: z
        .object({ id: z.string(), name: z.string(), ...meter })
        .strict()
        .nullable(),
      workspacePool: z.object(meter).strict(),
    })
    .strict(),
  storage: z
    .object({
      usedBytes: z.number().int(),
      limitBytes: z.number().int().nullable(),
      percentUsed: z.number().int(),
      usedAssets: z.number().int(),
      assetLimit: z.number().int().nullable(),
    })
    .strict(),
  apiSpend: z
    .object({
      bucketDate: z.string(),
      capCents: z.number().int().nullable(),
      spentCents: z.number().int(),
      remainingCents: z.number().int().nullable(),
    })
    .strict(),
});
