import { z } from 'zod';
// the health answers (lib/presenters/health.ts).

export { healthAuthSchema, healthSchema } from '../../../lib/presenters/health';

export const healthInput = z.object({});

export const healthAuthInput = z.object({}).strict();
