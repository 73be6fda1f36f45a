import { isoDate } from '../../validation';
import { z } from 'zod';
import { paginationInput } from '../../pagination';
// spec 4.9, 5.5 (docs/analytics.md): the analytics answers (lib/presenters/analytics.ts).

export {
  analyticsOverviewSchema,
  crossWorkspaceOverviewSchema,
  postAnalyticsSchema,
  viralPostSchema,
  viralPostsListSchema,
} from '../../../lib/presenters/analytics';

export const SORTS = {
  publishedAt: 'p.published_at',
  impressions: 'coalesce(s.impressions, 0)',
  reactions: 'coalesce(s.reactions, 0)',
  comments: 'coalesce(s.comments, 0)',
  reshares: 'coalesce(s.reshares, 0)',
  engagements: '(coalesce(s.reactions, 0) + coalesce(s.comments, 0) + coalesce(s.reshares, 0))',
  engagementRate: `(case when coalesce(s.impressions, 0) > 0 then (s.reactions + s.comments + s.reshares)::float8 / s.impressions else 0 end)`,
} as const;
export const getAnalyticsOverviewInput = z
  .object({ projectId: z.string().min(1).max(100).optional(), from: isoDate.optional(), to: isoDate.optional() })
  .strict();

type SortKey = keyof typeof SORTS;

export const listPostAnalyticsInput = z
  .object({
    projectId: z.string().min(1).max(100).optional(),
    sort: z.enum(Object.keys(SORTS) as [SortKey, ...SortKey[]]).optional(),
    order: z.enum(['asc', 'desc']).optional(),
    from: isoDate.optional(),
    to: isoDate.optional(),
    ...paginationInput,
  })
  .strict();

export const getCrossWorkspaceOverviewInput = z.object({ from: isoDate.optional(), to: isoDate.optional() }).strict();

export const searchViralPostsInput = z
  .object({
    query: z.string({ error: '`query` is required.' }).trim().min(1, '`query` must not be empty.').max(200),
    projectId: z.string().min(1).max(100).optional(),
    from: isoDate.optional(),
    to: isoDate.optional(),
    minEngagement: z.coerce.number().int().min(0).optional(),
    limit: z.any().optional(),
  })
  .strict();
