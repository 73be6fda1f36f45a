import { z } from 'zod';
import { dateTime, objectComponent } from './output';

/** spec 2.15: one page of at most 100 members, project references capped at 25. */
export const teamSchema = objectComponent('Team', {
  members: z.array(
    z
      .object({
        userId: z.string(),
        name: z.string(),
        email: z.string(),
        role: z.string(),
        roleLabel: z.enum(['Admin', 'Member', 'Client']),
        avatarUrl: z.string().nullable(),
        joinedAt: dateTime,
        projects: z.array(z.object({ id: z.string(), name: z.string() }).strict()),
      })
      .strict(),
  ),
  truncated: z.boolean(),
  totalCount: z.number().int(),
  projectsTruncated: z.boolean(),
});
