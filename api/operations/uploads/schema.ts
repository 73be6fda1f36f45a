// spec 4.5: the upload answer (lib/presenters/uploads.ts).

export { uploadSchema } from '../../../lib/presenters/uploads';
