import type { PostChange } from './lifecycle';
import type { PostRow } from './row';

// A post's images (spec 2.7 `media`, docs/media.md): media-library keys in order, with the alt
// text and name the post carries. One shape for every writer (PATCH /v1/posts/{id}/media, an
// image job that attaches its image) and for the publish step that uploads them.

export interface PostImage {
  key: string;
  alt: string;
  name: string;
}

export interface PostMedia {
  kind: 'images';
  images: PostImage[];
}

/** The images a post carries now, in order; none when its media is empty. */
export function imagesOf(post: Pick<PostRow, 'media'>): PostImage[] {
  const media = post.media as Partial<PostMedia> | null;
  return Array.isArray(media?.images) ? media.images : [];
}

/**
 * The full state of a post's images (spec 4.4 PATCH /v1/posts/{postId}/media): an empty list
 * clears them. Written with `post.updated` (spec 6); the schedule and the review are not moved.
 */
export function mediaSet(images: readonly PostImage[], now: Date): PostChange {
  return {
    set: { media: images.length ? { kind: 'images', images: [...images] } : null, updated_at: now },
    events: ['post.updated'],
    scheduleChanged: false,
  };
}
