import { createImageGeneration } from '../../operations/media/generations';
import { getMedia, importMedia, listMedia } from '../../operations/media/media';
import { followJob } from '../progress';
import { updatePostMedia } from '../../operations/media/postMedia';
import { createUpload } from '../../operations/uploads/uploads';
import { operationTool, READ, WRITE } from '../tool';

// spec 4.9: create_upload_url (sources:write). The media tools are additions (spec 9.3 allows
// new tools): the library and the post media write, over the same operations as REST. The
// projectId of these operations is optional everywhere, and the operation itself falls back to
// the consent-pinned default project (spec 4.7).

export const createUploadUrlTool = operationTool(createUpload, {
  name: 'create_upload_url',
  title: 'Create an upload URL',
  description:
    'Mints a presigned PUT URL and an upl_ handle for a file (purpose source, knowledge or media; fileName, contentType, bytes). PUT the bytes to `url` with exactly the returned `headers` (the content type and length are signed; another type is refused by the store) before `urlExpiresAt`, then pass the handle as uploadId. Requires sources:write.',
  scopes: { allOf: ['sources:write'] },
  annotations: { ...WRITE, openWorldHint: true },
  idempotent: true,
});

export const importMediaTool = operationTool(importMedia, {
  name: 'import_media',
  title: 'Import an image into the media library',
  description:
    'Adds an image to the media library from content_base64 (plain base64, about 3 MB decoded at most; optional sha256 of the bytes, mimeType or fileName) or from uploadId (after the bytes were PUT to its URL). The bytes must be a JPEG, PNG, GIF or WebP image; the same bytes imported twice return the same asset. Answers the asset; its `key` is what set_post_media takes. Requires posts:write.',
  scopes: { allOf: ['posts:write'] },
  annotations: { ...WRITE, idempotentHint: true },
  idempotent: true,
});

export const listMediaTool = operationTool(listMedia, {
  name: 'list_media',
  title: 'List media',
  description: 'Images of the media library, newest first; optional projectId filter. Cursor-paginated. Requires media:read.',
  scopes: { allOf: ['media:read'] },
  annotations: { ...READ, idempotentHint: true },
});

export const getMediaTool = operationTool(getMedia, {
  name: 'get_media',
  title: 'Get a media asset',
  description: 'One asset of the media library: key, mimeType, bytes, width, height, sha256, alt, title. Requires media:read.',
  scopes: { allOf: ['media:read'] },
  annotations: { ...READ, idempotentHint: true },
});

export const setPostMediaTool = operationTool(updatePostMedia, {
  name: 'set_post_media',
  title: "Set a post's images",
  description:
    "Replaces the images of a post with the given media-library keys, in order (an empty list removes them); alt and name default to the asset's alt text and title. They are published with the post. Requires posts:write and media:read.",
  scopes: { allOf: ['posts:write', 'media:read'] },
  annotations: { ...WRITE, idempotentHint: true },
  idempotent: true,
});

export const generateImageTool = operationTool(createImageGeneration, {
  name: 'generate_image',
  title: 'Generate an image with AI',
  description:
    'Queues an image generation job (type IMAGE_GENERATION): from a prompt, or the opening line of a post (postId), in a style (quote_card, photo, illustration, minimal). The image becomes a media-library asset and, with postId, is attached to that post. Answers the job; result.assetId and result.key name the asset when DONE. With a progressToken the call follows the job with notifications/progress and answers the finished job. Uses the AI budget and the daily spend cap. Requires posts:write or posts:generate.',
  scopes: { anyOf: ['posts:write', 'posts:generate'] },
  annotations: { ...WRITE, openWorldHint: true },
  defaultProject: true,
  idempotent: true,
  queuesJob: true,
  finish: async (ctx, body) => (ctx.progress ? followJob(ctx, body) : body),
});
