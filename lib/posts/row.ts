import type { PostColumns } from '../models';
import { delivery, type Delivery } from './lifecycle';

// spec 2.7: a post as the reads load it, and what its presentation (lib/presenters/posts.ts)
// derives from the row.

export const PLATFORM = 'LINKEDIN';

/** Columns a post read may leave out: neither the presenters nor the transitions read them. */
type UnreadColumns = 'workflow_synced_version' | 'generation_job_id' | 'review_round' | 'review_synced_round' | 'deleted_at';

/** A post as the reads load it: the model's columns, and what they join (the board status, the workspace's review setting, the project's zone). */
export type PostRow = Omit<PostColumns, UnreadColumns> &
  Partial<Pick<PostColumns, UnreadColumns>> & {
    status_title?: string | null;
    status_category?: string | null;
    require_review_workflow?: boolean;
    default_reviewer_user_id?: string | null;
    /** The project's calendar timezone (a write's reload joins it), which the publish workflow shows its times in. */
    timezone?: string | null;
    /** A scheduled post's turn (lib/publishing/turns.ts) as the write that scheduled it read it; absent: read it when needed. */
    publish_turn_ms?: number;
  };

/** The summary's row: its instants as Dates, or as ISO strings when read through lib/db TIMESTAMPS_AS_ISO (the post list). */
export type PostSummaryRow = Omit<PostRow, 'scheduled_at' | 'created_at' | 'updated_at'> & {
  scheduled_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string | null;
};

/** The stored delivery block (./lifecycle.ts writes it with every status change), with the status as the last word. */
export function deliveryOf(p: PostRow): Delivery {
  const stored = p.delivery ?? {};
  if (p.status === 'published')
    return delivery('published', { detail: p.network_post_urn ? `Live on the network as ${p.network_post_urn}.` : null });
  if (p.status === 'scheduled')
    return delivery(stored.state ?? 'scheduled', {
      ...stored,
      detail: stored.detail ?? 'Publishes about 2 minutes after the scheduled time.',
    });
  if (p.status === 'failed_to_publish')
    return delivery(stored.state ?? 'failed', { ...stored, detail: stored.detail ?? p.last_publish_error });
  return delivery('not_scheduled');
}

/**
 * spec 2.7 `funnelStage` (docs/engagement.md "funnelStage"): what a post is for follows from its
 * content type, the one thing about its purpose the API takes. A value stored on the row (legacy
 * imports) wins. Values: REACH (audience growth), TRUST (expertise, the team), CONVERT (offers).
 */
export function funnelStageOf(contentType: string): 'REACH' | 'TRUST' | 'CONVERT' {
  switch (contentType) {
    case 'EDUCATIONAL':
    case 'BUSINESS_INTERNAL':
      return 'TRUST';
    case 'BUSINESS_EXTERNAL':
    case 'BUSINESS':
      return 'CONVERT';
    default:
      return 'REACH';
  }
}
