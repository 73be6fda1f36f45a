import { z } from 'zod';
// spec 2.15: the team answer (lib/presenters/team.ts).

export { teamSchema } from '../../../lib/presenters/team';

export const listTeamInput = z.object({}).strict();
