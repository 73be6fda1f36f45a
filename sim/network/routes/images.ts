// Images on a post (docs/network-protocol.md, "Images on a post"): initializeUpload registers an
// image owned by an author and answers the URL its bytes go to; the post then references the
// image URN, and only an uploaded image its author owns may be referenced.

import { createHash, randomBytes } from 'node:crypto';
import type { SimPostImage } from '../control';
import { mediaTypeOf, restError, type SimResponse } from '../responses';
import { parseAuthorUrn, type AuthorRef, type ImageRecord, type SimState } from '../state';
import { authenticate, versioned, type Routes } from './common';

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
/** The network's multi-image post takes 2 to 20 images. */
const MAX_POST_IMAGES = 20;

export const imageRoutes: Routes = {
  'POST /rest/images': {
    operation: 'initializeImageUpload',
    style: 'rest',
    handle: versioned((ctx, caller, req, url, rawBody) => {
      if (url.searchParams.get('action') !== 'initializeUpload')
        return restError(400, 'ILLEGAL_ARGUMENT', 'only action=initializeUpload is supported');
      let owner: AuthorRef | null = null;
      try {
        const parsed = JSON.parse(rawBody.toString('utf8')) as { initializeUploadRequest?: { owner?: unknown } };
        const o = parsed?.initializeUploadRequest?.owner;
        owner = typeof o === 'string' ? parseAuthorUrn(o) : null;
      } catch {
        return restError(400, 'INVALID_REQUEST_BODY', 'body must be a JSON object');
      }
      if (!owner)
        return restError(422, 'INVALID_OWNER', 'initializeUploadRequest.owner must be urn:li:person:<id> or urn:li:organization:<id>');
      if (!ctx.state.mayActAs(caller.id, owner))
        return restError(403, 'ACCESS_DENIED', `Not enough permissions to upload images for urn:li:${owner.type}:${owner.id}`);
      const image: ImageRecord = {
        urn: `urn:li:image:D${randomBytes(9).toString('hex')}`,
        owner: `urn:li:${owner.type}:${owner.id}`,
        uploadToken: randomBytes(18).toString('base64url'),
        bytes: null,
        sha256: null,
        contentType: null,
        uploadCalls: 0,
      };
      ctx.state.images.set(image.urn, image);
      ctx.state.imagesByUploadToken.set(image.uploadToken, image);
      const host = req.headers.host ?? '127.0.0.1';
      return {
        status: 200,
        body: {
          value: {
            uploadUrlExpiresAt: Date.now() + 24 * 3600_000,
            uploadUrl: `http://${host}/dms-uploads/${image.uploadToken}`,
            image: image.urn,
          },
        },
      };
    }),
  },
  'PUT /dms-uploads': {
    operation: 'uploadImage',
    style: 'rest',
    handle: (ctx, req, _url, rawBody, param) => {
      const auth = authenticate(ctx, req);
      if ('error' in auth) return auth.error;
      const image = param === null ? undefined : ctx.state.imagesByUploadToken.get(param);
      if (!image) return restError(404, 'NOT_FOUND', 'no such upload');
      const owner = parseAuthorUrn(image.owner)!;
      if (!ctx.state.mayActAs(auth.person.id, owner)) return restError(403, 'ACCESS_DENIED', 'Not enough permissions to upload this image');
      const type = mediaTypeOf(req);
      if (!IMAGE_TYPES.has(type))
        return restError(415, 'UNSUPPORTED_MEDIA_TYPE', `Content-Type must be one of ${[...IMAGE_TYPES].join(', ')}`);
      if (rawBody.length === 0) return restError(400, 'EMPTY_UPLOAD', 'the upload has no bytes');
      // A repeated PUT replaces the bytes: uploading twice is harmless.
      image.bytes = rawBody;
      image.sha256 = createHash('sha256').update(rawBody).digest('hex');
      image.contentType = type;
      image.uploadCalls++;
      return { status: 201 };
    },
  },
};

/**
 * `content.media` (one image) or `content.multiImage` (2 to 20): every image must exist, be
 * owned by the post's author and have received its bytes, as the network requires.
 */
export function imagesOfContent(s: SimState, content: unknown, authorUrn: string): { images: SimPostImage[] } | { error: SimResponse } {
  if (content === undefined || content === null) return { images: [] };
  if (typeof content !== 'object' || Array.isArray(content))
    return { error: restError(422, 'INVALID_CONTENT', 'content must be an object') };
  const c = content as { media?: { id?: unknown; altText?: unknown }; multiImage?: { images?: unknown } };
  let refs: Array<{ id?: unknown; altText?: unknown }>;
  if (c.media !== undefined) refs = [c.media];
  else if (c.multiImage !== undefined && Array.isArray(c.multiImage.images)) {
    refs = c.multiImage.images as Array<{ id?: unknown; altText?: unknown }>;
    if (refs.length < 2 || refs.length > MAX_POST_IMAGES)
      return { error: restError(422, 'INVALID_CONTENT', `multiImage takes 2 to ${MAX_POST_IMAGES} images`) };
  } else return { error: restError(422, 'INVALID_CONTENT', 'content must carry media or multiImage.images') };
  const images: SimPostImage[] = [];
  for (const r of refs) {
    const image = typeof r?.id === 'string' ? s.images.get(r.id) : undefined;
    if (!image) return { error: restError(422, 'INVALID_CONTENT', `unknown image ${String(r?.id)}`) };
    if (image.owner !== authorUrn) return { error: restError(422, 'INVALID_CONTENT', `image ${image.urn} is not owned by ${authorUrn}`) };
    if (!image.bytes) return { error: restError(422, 'INVALID_CONTENT', `image ${image.urn} has not been uploaded`) };
    images.push({
      imageUrn: image.urn,
      altText: typeof r.altText === 'string' ? r.altText : '',
      sha256: image.sha256!,
      bytes: image.bytes.length,
      contentType: image.contentType!,
    });
  }
  return { images };
}
