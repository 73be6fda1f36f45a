// the health answers (lib/presenters/health.ts).

export { healthAuthSchema, healthSchema } from '../../../lib/presenters/health';
