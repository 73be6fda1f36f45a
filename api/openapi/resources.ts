import { z } from 'zod';

// spec 2: the resources as the REST door returns them. These are the operations' `output`
// schemas (api/operation.ts): the OpenAPI document publishes them and the test suite checks
// every JSON response against them (test/support/contract.ts), so a field added to a response
// and not here fails the suite. Objects are strict for that reason; a client still ignores
// unknown fields (spec 9 rule 3). Blocks owned by workflows still growing (a post's `review`
// and `media`) stay open.

const dateTime = z.string().describe('ISO 8601 date-time, UTC');
const nullableDateTime = dateTime.nullable();

/** spec 2.1: a single resource. */
export function single<T extends z.ZodType>(resource: T) {
  return z.object({ data: resource }).strict();
}

/** spec 2.1: a page of resources; `withTotal` for the webhook endpoint list. */
export function page<T extends z.ZodType>(resource: T, opts: { withTotal?: boolean } = {}) {
  const pagination = z
    .object({
      next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page.'),
      has_more: z.boolean(),
      ...(opts.withTotal ? { total: z.number().int() } : {}),
    })
    .strict();
  return z.object({ data: z.array(resource), pagination }).strict();
}

// ---- 2.2 / 2.3 / 2.4 / 2.15 workspace, principal, context --------------------------------------

export const workspaceSchema = z
  .object({
    id: z.string().describe('org_*'),
    name: z.string(),
    plan: z.string().describe('Plan name in upper case.'),
    features: z.record(z.string(), z.boolean()).describe('Unknown keys must be treated as false.'),
  })
  .strict();

export const principalSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('api_key'), id: z.string().describe('key_*'), scopes: z.array(z.string()) }).strict(),
  z
    .object({
      type: z.literal('oauth_token'),
      id: z.string().describe('oat_*'),
      clientId: z.string(),
      actingUserId: z.string(),
      scopes: z.array(z.string()),
      defaultProject: z.object({ id: z.string(), name: z.string() }).strict().nullable(),
    })
    .strict(),
]);

export const workspaceListEntrySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    isDefault: z.boolean(),
    reach: z.enum(['member', 'agency_owner']),
  })
  .strict();

/** spec 2.15: one page of at most 100 members, project references capped at 25. */
export const teamSchema = z
  .object({
    members: z.array(
      z
        .object({
          userId: z.string(),
          name: z.string(),
          email: z.string(),
          role: z.string(),
          roleLabel: z.enum(['Admin', 'Member', 'Client']),
          avatarUrl: z.string().nullable(),
          joinedAt: dateTime,
          projects: z.array(z.object({ id: z.string(), name: z.string() }).strict()),
        })
        .strict(),
    ),
    truncated: z.boolean(),
    totalCount: z.number().int(),
    projectsTruncated: z.boolean(),
  })
  .strict();

/** The workspace's custom post statuses (GET /v1/post-statuses). */
export const postStatusSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    category: z.string(),
    isDefault: z.boolean(),
    position: z.number().int(),
    postCount: z.number().int(),
  })
  .strict();

// ---- 2.5 / 2.6 project ---------------------------------------------------------------------------

export const networkBlockSchema = z
  .object({
    state: z.enum(['connected', 'expiring_soon', 'degraded', 'disconnected', 'revoked']),
    canPublish: z.boolean(),
    connectionStatus: z.string(),
    lastValidatedAt: nullableDateTime,
    accessTokenExpiresAt: nullableDateTime,
    detail: z.string().nullable(),
    reconnectUrl: z.string().nullable(),
  })
  .strict();

const projectShape = {
  id: z.string().describe('proj_*'),
  name: z.string(),
  type: z.string().describe('PERSONAL_BRAND, COMPANY_PAGE or AMPLIFIER'),
  typeLabel: z.string(),
  status: z.string(),
  username: z.string().nullable(),
  avatarUrl: z.string().nullable(),
  isActive: z.boolean(),
  createdAt: dateTime,
  network: networkBlockSchema.nullable(),
};

export const projectSchema = z.object(projectShape).strict();

export const streakSchema = z.object({ currentStreak: z.number().int(), longestStreak: z.number().int() }).strict();

export const workspaceContextSchema = z
  .object({
    workspace: workspaceSchema,
    principal: principalSchema,
    requireReviewWorkflow: z.boolean(),
    projects: z.array(z.object({ ...projectShape, streak: streakSchema.nullable() }).strict()),
    projectsTruncated: z.boolean(),
  })
  .strict();

export const workspaceMeSchema = z
  .object({
    workspace: workspaceSchema,
    principal: principalSchema,
    features: z.record(z.string(), z.boolean()),
  })
  .strict();

// ---- 2.7 post ------------------------------------------------------------------------------------

const postSummaryShape = {
  id: z.string().describe('post_*'),
  projectId: z.string().nullable(),
  status: z.string().describe('Legacy status enum (spec 3.1).'),
  platform: z.string(),
  contentType: z.string(),
  title: z.string(),
  content: z.string(),
  scheduledAt: nullableDateTime,
  createdAt: dateTime,
  updatedAt: nullableDateTime,
};

export const postSummarySchema = z.object(postSummaryShape).strict();

export const postSchema = z
  .object({
    ...postSummaryShape,
    statusCategory: z.string().nullable(),
    statusId: z.string().nullable(),
    statusTitle: z.string().nullable(),
    contentTruncated: z.boolean(),
    publishedAt: nullableDateTime,
    funnelStage: z.string(),
    lastPublishError: z.string().nullable(),
    lastPublishAttemptAt: nullableDateTime,
    delivery: z.object({ state: z.string(), willRetry: z.boolean(), retryUntil: nullableDateTime, detail: z.string().nullable() }).strict(),
    review: z.looseObject({ state: z.string(), awaitingDecision: z.boolean(), requiredByWorkspace: z.boolean() }),
    media: z.looseObject({ kind: z.string(), images: z.array(z.looseObject({ key: z.string() })) }),
    autoLike: z.boolean(),
    autoComment: z.boolean(),
  })
  .strict();

// ---- 2.8 note ------------------------------------------------------------------------------------

export const noteSchema = z
  .object({
    id: z.string().describe('note_*'),
    projectId: z.string(),
    content: z.string(),
    createdAt: dateTime,
    slot: z.object({ date: dateTime, contentType: z.string() }).strict().nullable(),
    folderId: z.string().nullable(),
    updatedAt: dateTime,
  })
  .strict();

// ---- 2.9 idea ------------------------------------------------------------------------------------

const clearable = z.string().nullable();

export const ideaSchema = z
  .object({
    id: z.string().describe('idea_*'),
    projectId: z.string(),
    title: z.string(),
    content: z.string(),
    status: z.string().describe('Derived: inbox, in_production, review, done.'),
    pillar: clearable,
    postType: clearable,
    assetFormat: clearable,
    hook: clearable,
    topic: clearable,
    scheduledFor: z.string().nullable().describe('Date-level calendar placement.'),
    linkedPost: z.object({ id: z.string(), statusCategory: z.string() }).strict().nullable(),
    createdAt: dateTime,
    updatedAt: dateTime,
  })
  .strict();

// ---- 2.12 job ------------------------------------------------------------------------------------

export const jobSchema = z
  .object({
    id: z.string().describe('job_*'),
    type: z.string(),
    status: z.enum(['QUEUED', 'RUNNING', 'DONE', 'FAILED', 'CANCELLED']),
    projectId: z.string().nullable(),
    startedAt: nullableDateTime,
    completedAt: nullableDateTime,
    progress: z
      .object({ progress: z.number().min(0).max(1), updatedAt: dateTime, message: z.string() })
      .strict()
      .nullable(),
    result: z.record(z.string(), z.unknown()).nullable(),
    errorCode: z.string().nullable(),
    errorMessage: z.string().nullable(),
    attemptCount: z.number().int(),
    estimatedCompletionMs: z.number().int(),
    createdAt: dateTime,
    updatedAt: dateTime,
  })
  .strict();

// ---- 2.11 source (docs/sources.md) ---------------------------------------------------------------

export const sourceSchema = z
  .object({
    id: z.string().describe('src_*'),
    projectId: z.string(),
    type: z.enum(['text', 'file']),
    name: z.string(),
    fileName: z.string().nullable(),
    mimeType: z.string().nullable(),
    bytes: z.number().int().nullable(),
    status: z.enum(['Processing', 'Success', 'Failed']),
    preview: z.string().describe('the first 2,000 characters of the text; the full text is never returned'),
    previewTruncated: z.boolean(),
    textLength: z.number().int().describe('characters of the whole text'),
    language: z.string().nullable(),
    durationSeconds: z.number().nullable().describe('recordings only'),
    topics: z.array(z.string()).optional().describe('present once status is Success'),
    hooks: z.array(z.string()).optional().describe('present once status is Success'),
    jobId: z.string().nullable().describe('the latest SOURCE_INGEST job of a file source'),
    errorCode: z.string().nullable(),
    createdAt: dateTime,
    updatedAt: dateTime,
  })
  .strict();

// ---- 2.14 webhook endpoint -----------------------------------------------------------------------

const endpointShape = {
  id: z.string().describe('whe_*'),
  url: z.string(),
  name: z.string(),
  events: z.array(z.string()),
  isActive: z.boolean(),
  disabledReason: z.string().nullable().describe('Automatic disables begin with `repeated_failures`.'),
  projectId: z.string().nullable(),
  secretLast4: z.string(),
  consecutiveFailures: z.number().int(),
  disabledAt: nullableDateTime,
  lastSuccessAt: nullableDateTime,
  lastFailureAt: nullableDateTime,
  createdAt: dateTime,
  updatedAt: dateTime,
};

export const webhookEndpointSchema = z.object(endpointShape).strict();

/** Create: the signing secret, shown once. */
export const webhookEndpointWithSecretSchema = z.object({ ...endpointShape, secret: z.string() }).strict();

/** Rotate: the new secret, and until when the previous one still signs. */
export const webhookEndpointRotatedSchema = z
  .object({ ...endpointShape, secret: z.string(), previousSecretExpiresAt: nullableDateTime })
  .strict();

export const webhookEndpointDeletedSchema = z.object({ id: z.string(), deleted: z.literal(true) }).strict();

export const webhookDeliverySchema = z
  .object({
    id: z.string(),
    endpointId: z.string(),
    eventId: z.string(),
    eventType: z.string(),
    eventCreatedAt: dateTime,
    status: z.string(),
    attemptCount: z.number().int(),
    nextAttemptAt: nullableDateTime,
    deliveredAt: nullableDateTime,
    failedAt: nullableDateTime,
    failureReason: z.string().nullable(),
    lastError: z.string().nullable(),
    attempts: z.array(
      z
        .object({
          attempt: z.number().int(),
          at: dateTime,
          outcome: z.string(),
          statusCode: z.number().int().nullable(),
          durationMs: z.number().int(),
          error: z.string().nullable(),
          remoteAddress: z.string().nullable(),
        })
        .strict(),
    ),
    createdAt: dateTime,
    updatedAt: dateTime,
  })
  .strict();

// ---- 2.16 usage ----------------------------------------------------------------------------------

const meter = { percentUsed: z.number().int().min(0).max(100), unlimited: z.boolean() };

export const usageSchema = z
  .object({
    plan: z.string(),
    canGenerate: z.boolean(),
    blockedBy: z.enum(['weekly_ai_budget', 'daily_api_spend_cap']).nullable(),
    ai: z
      .object({
        scope: z.string(),
        ...meter,
        enforcement: z.enum(['off', 'shadow', 'warn', 'block']),
        weekStart: z.string().describe('date'),
        resetsAt: dateTime,
        project: z
          .object({ id: z.string(), name: z.string(), ...meter })
          .strict()
          .nullable(),
        workspacePool: z.object(meter).strict(),
      })
      .strict(),
    storage: z
      .object({
        usedBytes: z.number().int(),
        limitBytes: z.number().int().nullable(),
        percentUsed: z.number().int(),
        usedAssets: z.number().int(),
        assetLimit: z.number().int().nullable(),
      })
      .strict(),
    apiSpend: z
      .object({
        bucketDate: z.string(),
        capCents: z.number().int().nullable(),
        spentCents: z.number().int(),
        remainingCents: z.number().int().nullable(),
      })
      .strict(),
  })
  .strict();

// ---- health --------------------------------------------------------------------------------------

export const healthSchema = z.object({ status: z.literal('ok'), time: dateTime }).strict();

export const healthAuthSchema = z
  .object({
    status: z.literal('ok'),
    workspaceId: z.string(),
    principal: z.object({ type: z.enum(['api_key', 'oauth_token']), id: z.string() }).strict(),
  })
  .strict();

/** The named schemas of the document's components (each referenced from the operations that return it). */
// ---- 2.10 knowledge document (docs/knowledge.md) -------------------------------------------------
export const knowledgeDocumentSchema = z
  .object({
    id: z.string().describe('kb_*'),
    scope: z.enum(['PROJECT', 'WORKSPACE']),
    name: z.string(),
    status: z.string(),
    tags: z.array(z.string()),
    createdAt: dateTime,
    chunkCount: z.number().int(),
    textPreview: z.string().max(2000),
    textPreviewTruncated: z.boolean(),
    hasFullText: z.boolean(),
    projectId: z.string().nullable(),
    type: z.enum(['text', 'file', 'url', 'youtube']),
    sourceName: z.string().nullable(),
    sourceUrl: z.string().nullable(),
    language: z.string().nullable(),
    folderId: z.string().nullable(),
    lastSyncedAt: nullableDateTime,
  })
  .strict();

/** A search hit: the document, its rank and the best passage with matches between `**`. */
export const knowledgeHitSchema = knowledgeDocumentSchema.extend({ rank: z.number().optional(), snippet: z.string().optional() }).strict();
// ---- company pages (GET /v1/company-pages) ------------------------------------------------------

export const companyPageSchema = z
  .object({
    ...projectShape,
    linkedAccount: z
      .object({
        projectId: z.string().nullable().describe("the linked personal account's project here, when the caller can see one"),
        name: z.string().nullable(),
        username: z.string().nullable(),
      })
      .strict()
      .nullable()
      .describe('the personal account the page publishes through; null when never linked'),
    canPublish: z.boolean(),
  })
  .strict();

// ---- calendar (GET /v1/calendar, docs/calendar.md) ----------------------------------------------

const calendarDate = z.string().describe("YYYY-MM-DD, in the project's timezone");
const calendarTimed = {
  id: z.string(),
  projectId: z.string(),
  at: dateTime,
  date: calendarDate,
  time: z.string().describe("HH:MM, in the project's timezone"),
};

export const calendarSchema = z
  .object({
    from: calendarDate,
    to: calendarDate,
    maxDays: z.number().int(),
    projects: z.array(z.object({ id: z.string(), name: z.string(), type: z.string(), timezone: z.string() }).strict()),
    entries: z.array(
      z.discriminatedUnion('type', [
        z.object({ type: z.literal('post'), ...calendarTimed, status: z.string(), title: z.string(), contentType: z.string() }).strict(),
        z
          .object({
            type: z.literal('draft'),
            ...calendarTimed,
            status: z.string(),
            title: z.string(),
            contentType: z.string(),
            slotId: z.string(),
          })
          .strict(),
        z.object({ type: z.literal('note'), ...calendarTimed, contentType: z.string(), content: z.string(), slotId: z.string() }).strict(),
        z
          .object({
            type: z.literal('idea'),
            id: z.string(),
            projectId: z.string(),
            date: calendarDate,
            title: z.string(),
            status: z.string(),
          })
          .strict(),
      ]),
    ),
    truncated: z.boolean().describe('more entries than one answer holds (5,000); narrow the range'),
  })
  .strict();

// ---- reviews (GET /v1/reviews/awaiting, docs/review.md) ------------------------------------------

/** A post summary with its review block (open: the review round is a block still growing). */
export const postAwaitingReviewSchema = z
  .object({
    ...postSummaryShape,
    review: z.looseObject({ state: z.string() }),
  })
  .strict();

/** The awaiting-review list: at most 200 posts, newest first, no cursor. */
export const awaitingReviewListSchema = z.object({ data: z.array(postAwaitingReviewSchema) }).strict();

// ---- 2.13 media asset, uploads (spec 4.5 / 4.7, docs/media.md) -----------------------------------

export const mediaAssetSchema = z
  .object({
    id: z.string().describe('med_*'),
    key: z.string().describe('the key a post references in its images'),
    projectId: z.string().nullable(),
    mimeType: z.string(),
    bytes: z.number().int(),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    sha256: z.string().describe('hex SHA-256 of the bytes; an import of the same bytes returns the existing asset'),
    alt: z.string().nullable(),
    title: z.string().nullable(),
    fileName: z.string().nullable(),
    createdAt: dateTime,
  })
  .strict();

/** spec 4.5: the presigned PUT and the upl_ handle a later request references by `uploadId`. */
export const uploadSchema = z
  .object({
    id: z.string().describe('upl_*'),
    purpose: z.string(),
    fileName: z.string(),
    contentType: z.string(),
    bytes: z.number().int(),
    projectId: z.string().nullable(),
    method: z.literal('PUT'),
    url: z.string().describe('the presigned URL; PUT the bytes with exactly `headers`'),
    headers: z.record(z.string(), z.string()),
    urlExpiresAt: dateTime,
    expiresAt: dateTime.describe('when the handle can no longer be referenced'),
  })
  .strict();

// ---- analytics (spec 4.9, 5.5, docs/analytics.md) ------------------------------------------------

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

export const analyticsOverviewSchema = z
  .object({
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
    cadence: z
      .object({ posts: z.number().int(), postsPerWeek: z.number(), activeWeeks: z.number().int(), weeks: z.number().int() })
      .strict(),
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
  })
  .strict();

export const postAnalyticsSchema = z
  .object({
    ...postFiguresShape,
    networkPostUrn: z.string().nullable(),
    samples: z.number().int(),
    lastSyncedAt: nullableDateTime,
    sync: z.object({ state: z.string(), detail: z.string().nullable() }).strict(),
  })
  .strict();

export const crossWorkspaceOverviewSchema = z
  .object({
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
  })
  .strict();

export const viralPostSchema = z
  .object({
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
  })
  .strict();

/** The viral search answer: the posts and what was searched, through which project's account. */
export const viralPostsListSchema = z
  .object({
    data: z.array(viralPostSchema),
    meta: z.object({ query: z.string(), total: z.number().int(), searchedAs: z.string() }).strict(),
  })
  .strict();

export const NAMED_RESOURCES: Record<string, z.ZodType> = {
  Workspace: workspaceSchema,
  Principal: principalSchema,
  WorkspaceMe: workspaceMeSchema,
  WorkspaceContext: workspaceContextSchema,
  WorkspaceListEntry: workspaceListEntrySchema,
  NetworkConnection: networkBlockSchema,
  Project: projectSchema,
  PostSummary: postSummarySchema,
  Post: postSchema,
  Note: noteSchema,
  Job: jobSchema,
  Source: sourceSchema,
  WebhookEndpoint: webhookEndpointSchema,
  WebhookEndpointWithSecret: webhookEndpointWithSecretSchema,
  WebhookEndpointRotated: webhookEndpointRotatedSchema,
  WebhookDelivery: webhookDeliverySchema,
  Usage: usageSchema,
  Team: teamSchema,
  Idea: ideaSchema,
  PostStatus: postStatusSchema,
  KnowledgeDocument: knowledgeDocumentSchema,
  CompanyPage: companyPageSchema,
  Calendar: calendarSchema,
  PostAwaitingReview: postAwaitingReviewSchema,
  MediaAsset: mediaAssetSchema,
  Upload: uploadSchema,
  AnalyticsOverview: analyticsOverviewSchema,
  PostAnalytics: postAnalyticsSchema,
  CrossWorkspaceOverview: crossWorkspaceOverviewSchema,
  ViralPost: viralPostSchema,
};
