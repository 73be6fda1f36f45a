// spec 2.15: the team answer (lib/presenters/team.ts).

export { teamSchema } from '../../../lib/presenters/team';
