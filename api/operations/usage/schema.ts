// spec 2.16: the usage answer (lib/presenters/usage.ts).

export { usageSchema } from '../../../lib/presenters/usage';
