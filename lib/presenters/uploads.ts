import { z } from 'zod';
import { dateTime, objectComponent } from './output';

/** spec 4.5: the presigned PUT and the upl_ handle a later request references by `uploadId`. */
export const uploadSchema = objectComponent('Upload', {
  id: z.string().describe('upl_*'),
  purpose: z.string(),
  fileName: z.string(),
  contentType: z.string(),
  bytes: z.number().int(),
  projectId: z.string().nullable(),
  method: z.literal('PUT'),
  url: z.string().describe('the presigned URL; PUT the bytes with exactly `headers`'),
  headers: z.record(z.string(), z.string()),
  urlExpiresAt: dateTime,
  expiresAt: dateTime.describe('when the handle can no longer be referenced'),
});
