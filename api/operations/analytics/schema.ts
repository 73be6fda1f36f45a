// spec 4.9, 5.5 (docs/analytics.md): the analytics answers (lib/presenters/analytics.ts).

export {
  analyticsOverviewSchema,
  crossWorkspaceOverviewSchema,
  postAnalyticsSchema,
  viralPostSchema,
  viralPostsListSchema,
} from '../../../lib/presenters/analytics';
