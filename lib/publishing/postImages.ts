import type { Knex } from 'knex';
import type { Author, NetworkClient, PostImageRef } from '../network/client';
import { NetworkError } from '../network/errors';
import { imagesOf } from '../posts/media';
import { MediaAsset } from '../models';
import type { PostRow } from '../posts/row';
import type { ObjectStore } from '../storage/objectStore';

// Publishing carries the post's images (spec 2.7 media, docs/media.md "Publishing"): each image
// goes through the network's images API (initialize an upload, PUT the bytes) just before the
// post that references it is created. Exactly-once rests on the post's reference, not on the
// images: a crash after an upload and before the post call makes the retry upload again (an
// unreferenced image on the network is harmless) and then create the post once.

function gone(key: string): NetworkError {
  // Permanent: retrying cannot bring an asset back, and the post must not go out without it.
  return new NetworkError({
    kind: 'permanent',
    code: 'invalid_request',
    status: null,
    operation: 'uploadImage',
    message: `uploadImage: the image ${key} is no longer in the media library`,
  });
}

export async function uploadPostImages(input: {
  db: Knex | Knex.Transaction;
  network: NetworkClient;
  store: ObjectStore;
  accessToken: string;
  author: Author;
  post: Pick<PostRow, 'workspace_id' | 'media'>;
}): Promise<PostImageRef[]> {
  const images = imagesOf(input.post);
  if (images.length === 0) return [];
  const rows = await MediaAsset.forWorkspace(input.post.workspace_id, input.db)
    .whereIn(
      'key',
      images.map((i) => i.key),
    )
    .select('key', 'mime_type');
  const typeOf = new Map(rows.map((r) => [r.key, r.mime_type]));
  const refs: PostImageRef[] = [];
  for (const image of images) {
    const contentType = typeOf.get(image.key);
    if (!contentType) throw gone(image.key);
    const bytes = await input.store.get(image.key);
    if (!bytes) throw gone(image.key);
    const { imageUrn, uploadUrl } = await input.network.initializeImageUpload(input.accessToken, input.author);
    await input.network.uploadImage(input.accessToken, uploadUrl, bytes, contentType);
    refs.push({ imageUrn, altText: image.alt ?? '' });
  }
  return refs;
}
