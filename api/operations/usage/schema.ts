import { z } from 'zod';
// spec 2.16: the usage answer (lib/presenters/usage.ts).

export { usageSchema } from '../../../lib/presenters/usage';

export const getUsageInput = z.object({ projectId: z.string().min(1).max(100).optional() }).strict();
