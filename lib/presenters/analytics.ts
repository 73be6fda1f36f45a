import { z } from 'zod';
import { dateTime, nullableDateTime, objectComponent } from './output';
import { streakSchema } from './projects';

// spec 4.9, 5.5 (docs/analytics.md): the analytics answers.

const totalsShape = {
  impressions: z.number().int(),
  reactions: z.number().int(),
  comments: z.number().int(),
  reshares: z.number().int(),
  engagements: z.number().int(),
  engagementRate: z.number().describe('engagements / impressions, 4 decimals; 0 without impressions'),
};
const totalsSchema = z.object({ posts: z.number().int(), ...totalsShape }).strict();
const analyticsDate = z.string().describe('YYYY-MM-DD');
const trend = z.number().nullable().describe('relative change against the previous period; null when it had none');

const postFiguresShape = { postId: z.string(), title: z.string(), publishedAt: dateTime, ...totalsShape };

export const analyticsOverviewSchema = objectComponent('AnalyticsOverview', {
  projectId: z.string(),
  from: analyticsDate,
  to: analyticsDate,
  timezone: z.string(),
  totals: totalsSchema,
  previousPeriod: z.object({ from: analyticsDate, to: analyticsDate, totals: totalsSchema }).strict(),
  trends: z
    .object({
      posts: trend,
      impressions: trend,
      reactions: trend,
      comments: trend,
      reshares: trend,
      engagements: trend,
      engagementRate: z.number().describe('difference in points'),
    })
    .strict(),
  daily: z.array(
    z
      .object({
        date: analyticsDate,
        posts: z.number().int(),
        impressions: z.number().int(),
        reactions: z.number().int(),
        comments: z.number().int(),
        reshares: z.number().int(),
      })
      .strict(),
  ),
  bestPosts: z.array(z.object(postFiguresShape).strict()),
  cadence: z.object({ posts: z.number().int(), postsPerWeek: z.number(), activeWeeks: z.number().int(), weeks: z.number().int() }).strict(),
  bestTimes: z
    .object({
      minimumSample: z.number().int(),
      sampleSize: z.number().int(),
      slots: z
        .array(
          z
            .object({
              weekday: z.enum(['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat']),
              hour: z.number().int().min(0).max(23),
              posts: z.number().int(),
              averageEngagementRate: z.number(),
            })
            .strict(),
        )
        .nullable()
        .describe('null below the minimum sample'),
    })
    .strict(),
  sync: z
    .object({
      lastSyncedAt: nullableDateTime,
      pendingPosts: z.number().int(),
      blockedPosts: z.number().int(),
      failedPosts: z.number().int(),
      detail: z.string().nullable(),
    })
    .strict(),
  streak: streakSchema.nullable(),
});

export const postAnalyticsSchema = objectComponent('PostAnalytics', {
  ...postFiguresShape,
  networkPostUrn: z.string().nullable(),
  samples: z.number().int(),
  lastSyncedAt: nullableDateTime,
  sync: z.object({ state: z.string(), detail: z.string().nullable() }).strict(),
});

export const crossWorkspaceOverviewSchema = objectComponent('CrossWorkspaceOverview', {
  from: analyticsDate,
  to: analyticsDate,
  workspaces: z.array(
    z
      .object({
        workspaceId: z.string(),
        name: z.string(),
        reach: z.string(),
        projects: z.number().int(),
        posts: z.number().int(),
        ...totalsShape,
      })
      .strict(),
  ),
  totals: totalsSchema,
});

export const viralPostSchema = objectComponent('ViralPost', {
  postUrn: z.string(),
  author: z.object({ name: z.string().nullable(), username: z.string().nullable() }).strict(),
  text: z.string(),
  publishedAt: dateTime,
  impressions: z.number().int(),
  reactions: z.number().int(),
  comments: z.number().int(),
  reshares: z.number().int(),
  engagements: z.number().int(),
  engagementRate: z.number(),
});

/** The viral search answer: the posts and what was searched, through which project's account. */
export const viralPostsListSchema = z
  .object({
    data: z.array(viralPostSchema),
    meta: z.object({ query: z.string(), total: z.number().int(), searchedAs: z.string() }).strict(),
  })
  .strict();
