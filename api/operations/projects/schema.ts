import { z } from 'zod';
import { component, dateTime, nullableDateTime } from '../../output';

// spec 2.5 / 2.6: the project as every door returns it, and its network connection block.

export const networkBlockSchema = component(
  'NetworkConnection',
  z
    .object({
      state: z.enum(['connected', 'expiring_soon', 'degraded', 'disconnected', 'revoked']),
      canPublish: z.boolean(),
      connectionStatus: z.string(),
      lastValidatedAt: nullableDateTime,
      accessTokenExpiresAt: nullableDateTime,
      detail: z.string().nullable(),
      reconnectUrl: z.string().nullable(),
    })
    .strict(),
);

export const projectShape = {
  id: z.string().describe('proj_*'),
  name: z.string(),
  type: z.string().describe('PERSONAL_BRAND, COMPANY_PAGE or AMPLIFIER'),
  typeLabel: z.string(),
  status: z.string(),
  username: z.string().nullable(),
  avatarUrl: z.string().nullable(),
  isActive: z.boolean(),
  createdAt: dateTime,
  network: networkBlockSchema.nullable(),
};

export const projectSchema = component('Project', z.object(projectShape).strict());

/** spec 2.4: the publishing streak of a project (the workspace context, analytics). */
export const streakSchema = z.object({ currentStreak: z.number().int(), longestStreak: z.number().int() }).strict();

export type Project = z.infer<typeof projectSchema>;
