import { PROJECT_TYPES } from '../../../lib/models';
import { paginationInput } from '../../pagination';
import { z } from 'zod';
// spec 2.5 / 2.6: the project answers (lib/presenters/projects.ts).

export { networkBlockSchema, projectSchema, projectShape, streakSchema, type Project } from '../../../lib/presenters/projects';

export const listProjectsInput = z.object({ ...paginationInput, type: z.enum(PROJECT_TYPES).optional() }).strict();

export const getProjectInput = z.object({ projectId: z.string().max(100) }).strict();
