import { getAnalyticsOverview, getCrossWorkspaceOverview, listPostAnalytics, searchViralPosts } from '../../operations/analytics/analytics';
import { operationTool, READ } from '../tool';

// spec 4.9: get_analytics_overview, list_post_analytics, search_viral_posts (analytics:read);
// get_cross_workspace_analytics is the 9.3 addition twin of GET /v1/analytics/cross-workspace/overview.
// The overview and post list resolve the default project in the operation (REST does the same).

const PROJECT_NOTE = 'Defaults to the project pinned when access was granted; required for API keys.';

export const getAnalyticsOverviewTool = operationTool(getAnalyticsOverview, {
  name: 'get_analytics_overview',
  title: 'Analytics overview',
  description:
    "A project's analytics for from..to (YYYY-MM-DD in its timezone, default the last 30 days, at most 366): totals of posts published in the period (impressions, reactions, comments, reshares, engagement rate) against the previous period, daily gains, best posts, posting cadence, streak, best times to post, and the metrics sync state. Requires analytics:read.",
  scopes: { allOf: ['analytics:read'] },
  annotations: { ...READ, idempotentHint: true },
  argumentNotes: { projectId: PROJECT_NOTE },
});

export const listPostAnalyticsTool = operationTool(listPostAnalytics, {
  name: 'list_post_analytics',
  title: 'List post analytics',
  description:
    "Per-post metrics of a project's published posts, sorted by sort (publishedAt, impressions, reactions, comments, reshares, engagements, engagementRate) and order (default desc); optional from/to on the publish date. Cursor-paginated. Requires analytics:read.",
  scopes: { allOf: ['analytics:read'] },
  annotations: { ...READ, idempotentHint: true },
  argumentNotes: { projectId: PROJECT_NOTE },
});

export const searchViralPostsTool = operationTool(searchViralPosts, {
  name: 'search_viral_posts',
  title: 'Search viral posts',
  description:
    'Keyword search (every word must match) over high-performing public posts of the network, ranked by engagement; filter by publish period (from/to) and minEngagement; limit 1..50 (default 20). Requires analytics:read; not available to client accounts.',
  scopes: { allOf: ['analytics:read'] },
  annotations: { ...READ, idempotentHint: false, openWorldHint: true },
});

export const getCrossWorkspaceAnalyticsTool = operationTool(getCrossWorkspaceOverview, {
  name: 'get_cross_workspace_analytics',
  title: 'Analytics across workspaces',
  description:
    'One row of totals per workspace this access reaches (memberships and agency client workspaces; an API key sees its one workspace) for from..to in UTC days. Requires analytics:read.',
  scopes: { allOf: ['analytics:read'] },
  annotations: { ...READ, idempotentHint: true },
});
