import { z } from 'zod';
import { config } from '../../../lib/config';
import { mintUpload, UPLOAD_PURPOSES } from '../../../lib/media/uploads';
import type { ScopeRule } from '../../../lib/scopes';
import { defineOperation, depsOf } from '../../operation';
import { single } from '../../output';
import { uploadSchema } from './schema';
import { gate, type ApiVersion } from '../../versioning';
import { projectOrDefault } from '../projects/resolve';

// spec 4.5 POST /v1/uploads: mint a presigned PUT URL and an `upl_` handle.

export const createUploadInput = z
  .object({
    fileName: z.string().min(1).max(config.media.fileNameChars),
    contentType: z
      .string()
      .min(3)
      .max(config.media.mimeTypeChars)
      .regex(/^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+$/, 'must be a media type such as image/png'),
    bytes: z.number().int().min(1),
    purpose: z.enum(UPLOAD_PURPOSES),
    projectId: z.string().min(1).max(100).optional(),
  })
  .strict();

/**
 * spec 9.4 / 5.2 rule 1: from 2026-08-10 one of sources:write or knowledge:write (a
 * group-alternative refusal carries no details, 7.2). On 2026-08-01 the earlier behaviour holds:
 * any valid token of the workspace (docs/media.md, "Versioning").
 */
export function uploadScopes(version: ApiVersion): ScopeRule {
  return gate(version, 'uploadsRequireSourceOrKnowledgeScope') ? { anyOf: ['sources:write', 'knowledge:write'] } : 'any';
}

export const createUpload = defineOperation({
  name: 'uploads.create',
  summary: 'Mint a presigned PUT URL and an upl_ handle for a file referenced later by uploadId.',
  kind: 'write',
  scopes: uploadScopes,
  clientRole: 'deny',
  input: createUploadInput,
  output: single(uploadSchema),
  handler: async (ctx, input) => {
    const { auth } = ctx;
    const projectId = await projectOrDefault(auth, input.projectId);
    const upload = await mintUpload(
      {
        workspaceId: auth.workspaceId,
        projectId,
        purpose: input.purpose,
        fileName: input.fileName,
        contentType: input.contentType,
        bytes: input.bytes,
      },
      depsOf(ctx).objectStore,
    );
    return { data: upload };
  },
});
