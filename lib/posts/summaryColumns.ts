// A module of its own, importing nothing, so the bench's bare server can select the post list's
// columns without loading the service's database layer.

/** The columns presentPostSummary (lib/presenters/posts.ts) reads, as the post list selects them. */
export const POST_SUMMARY_COLUMNS = [
  'posts.id',
  'posts.project_id',
  'posts.status',
  'posts.content_type',
  'posts.title',
  'posts.content',
  'posts.scheduled_at',
  'posts.created_at',
  'posts.updated_at',
] as const;
