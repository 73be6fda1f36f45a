import { config } from '../../../lib/config';
import { db } from '../../../lib/db';
import { ApiError, errors } from '../../../lib/errors';
import { Post } from '../../../lib/models';
import type { PostImage } from '../../../lib/posts/media';
import { presentPost } from '../../../lib/presenters/posts';
import { loadPostForUpdate, setPostMedia } from '../../../lib/posts/write';
import { defineOperation } from '../../operation';
import { postSchema } from '../posts/schema';
import { single } from '../../output';
import { assetsByKey } from './media';
import { postMediaInput } from './schema';

// spec 4.4 PATCH /v1/posts/{postId}/media: needs posts:write AND media:read (both missing is a
// multi-scope refusal: scope_missing without details, 7.2). The body (left open by the spec) is
// `{ images: [{ key, alt?, name? }] }`, the full state of the post's images in order; an empty
// list clears them. Emits post.updated (spec 6).

export const updatePostMedia = defineOperation({
  name: 'posts.media.update',
  summary: "Full-state write of a post's images (media-library keys, in order; empty clears).",
  kind: 'write',
  scopes: { allOf: ['posts:write', 'media:read'] },
  clientRole: 'deny',
  input: postMediaInput,
  output: single(postSchema),
  handler: async ({ auth }, input) => {
    const max = config.media.maxImagesPerPost;
    if (input.images.length > max)
      throw errors.unprocessable(`A post carries at most ${max} images on the network (${input.images.length} given).`, {
        limit: max,
        actual: input.images.length,
      });
    const keys = input.images.map((i) => i.key);
    const duplicate = keys.find((k, i) => keys.indexOf(k) !== i);
    if (duplicate) throw errors.unprocessable(`Image ${duplicate} is listed twice.`, { key: duplicate });

    // The post first: a foreign or deleted post is 404 whatever the body says.
    if (!(await Post.visibleTo(auth).findById(input.postId).whereNull('posts.deleted_at').select('posts.id')))
      throw errors.notFound('post');

    const assets = await assetsByKey(auth.workspaceId, keys);
    const missing = keys.find((k) => !assets.has(k));
    // Rule 1: a key of another workspace's asset is simply not found.
    if (missing) throw new ApiError('not_found', `No media asset with key ${missing} in this workspace.`, { key: missing });
    // spec 4.7: the asset's alt text is carried onto the post at attach time unless given here.
    const images: PostImage[] = input.images.map((i) => {
      const a = assets.get(i.key)!;
      return { key: a.key, alt: i.alt ?? a.alt, name: i.name ?? (a.title || a.file_name || '') };
    });

    const updated = await db().transaction(async (trx) => {
      const post = await loadPostForUpdate(trx, auth.workspaceId, input.postId, true);
      if (!post) throw errors.notFound('post');
      return setPostMedia(trx, post, images);
    });
    return { data: presentPost(updated.post) };
  },
});
