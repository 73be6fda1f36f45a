import {
  addDays,
  daysBetween,
  localDate,
  periodBounds,
  periodTotals,
  postFigures,
  projectOverview,
  totalsOf,
} from '../../../lib/analytics/overview';
import { db, isoOf, readPrepared, shapedRead, TIMESTAMPS_AS_ISO } from '../../../lib/db';
import { ApiError, errors } from '../../../lib/errors';
import { Post, Project, Workspace, type Reach } from '../../../lib/models';
import { isNetworkError } from '../../../lib/network/errors';
import { connectionToken, recordCall } from '../../../lib/publishing/probe';
import { computeStreaks } from '../../../lib/streaks';
import { planAllowsApi } from '../../auth/apiKeys';
import { reachableWorkspaces, workspaceAccesses } from '../../oauth/reach';
import type { AuthContext } from '../../auth/context';
import { defineOperation, depsOf } from '../../operation';
import {
  analyticsOverviewSchema,
  crossWorkspaceOverviewSchema,
  postAnalyticsSchema,
  viralPostsListSchema,
  getAnalyticsOverviewInput,
  listPostAnalyticsInput,
  getCrossWorkspaceOverviewInput,
  searchViralPostsInput,
  SORTS,
} from './schema';
import { page, single } from '../../output';
import { decodeSortCursor, encodeSortCursor, parseLimit } from '../../pagination';
import { findProject } from '../projects/queries';
import { resolveProjectOrDefault } from '../projects/resolve';

// Analytics (spec 4.9 get_analytics_overview, list_post_analytics, search_viral_posts; spec 4.1
// GET /v1/analytics/cross-workspace/overview; docs/analytics.md). Scope analytics:read. Client
// role (spec 5.4): analytics read normally; viral posts answer forbidden_project client_role.

const SCOPE = { allOf: ['analytics:read'] } as const;
/** What the reads a client-role account makes normally share (spec 5.4). */
const ANALYTICS_READ = { kind: 'read', scopes: SCOPE, clientRole: 'allow' } as const;
const MAX_DAYS = 366;
const DEFAULT_DAYS = 30;

/** from/to as calendar days: defaults to the last 30 days up to today; at most 366 days. */
function period(input: { from?: string; to?: string }, timeZone: string): { from: string; to: string } {
  const to = input.to ?? (input.from ? addDays(input.from, DEFAULT_DAYS - 1) : localDate(new Date(), timeZone));
  const from = input.from ?? addDays(to, -(DEFAULT_DAYS - 1));
  if (to < from) throw errors.invalidRequest('`to` must not be before `from`.', { from, to });
  const days = daysBetween(from, to);
  if (days > MAX_DAYS)
    throw errors.invalidRequest(`The period covers ${days} days; at most ${MAX_DAYS} can be read at once.`, {
      from,
      to,
      maxDays: MAX_DAYS,
    });
  return { from, to };
}

export const getAnalyticsOverview = defineOperation({
  name: 'analytics.overview',
  summary: 'Totals and trends, daily gains, best posts, cadence, streak and best times to post of one project.',
  ...ANALYTICS_READ,
  input: getAnalyticsOverviewInput,
  output: single(analyticsOverviewSchema),
  handler: async ({ auth }, input) => {
    const project = await resolveProjectOrDefault(auth, input.projectId);
    const { from, to } = period(input, project.timezone);
    const [overview, streaks] = await Promise.all([projectOverview(project, from, to), computeStreaks([project])]);
    // Added to the overview's object, not spread into a new one (see postFigures).
    return { data: Object.assign(overview, { streak: streaks.get(project.id) ?? null }) };
  },
});

// ---- per-post analytics: keyset over (sort value, id), cursors from api/pagination.ts ----

type SortKey = keyof typeof SORTS;

/**
 * The per-post page (GET /v1/analytics/posts), by shape: sort key and order, which period bounds
 * are set, whether a cursor positions it, the page size. The status is written into the text, not
 * bound: a prepared statement's generic plan can then prove the partial index posts_published
 * (`where status = 'published'`) applies; with the status as a parameter it read the project's
 * posts of every status through another index (bench/README.md, reads).
 */
const postAnalyticsPage = shapedRead(
  (
    shape: { sort: SortKey; order: 'asc' | 'desc'; from: boolean; to: boolean; cursor: boolean; limit: number },
    param: (name: 'workspaceId' | 'projectId' | 'from' | 'to' | 'cursorValue' | 'cursorId') => string,
  ) => {
    const expr = SORTS[shape.sort];
    const q = Post.forWorkspace(param('workspaceId'))
      .alias('p')
      .leftJoin('post_metric_state as s', 's.post_id', 'p.id')
      .where('p.project_id', param('projectId'))
      .whereRaw(`p.status = 'published'`)
      .whereNotNull('p.published_at')
      .select(
        'p.id',
        'p.title',
        'p.published_at',
        'p.network_post_urn',
        's.impressions',
        's.reactions',
        's.comments',
        's.reshares',
        's.samples',
        's.sync_state',
        's.last_synced_at',
        's.last_error',
        db().raw(`${expr} as sort_value`),
      );
    if (shape.from) q.where('p.published_at', '>=', param('from'));
    if (shape.to) q.where('p.published_at', '<', param('to'));
    if (shape.cursor) q.whereRaw(`(${expr}, p.id) ${shape.order === 'desc' ? '<' : '>'} (?, ?)`, [param('cursorValue'), param('cursorId')]);
    return q
      .orderByRaw(`${expr} ${shape.order}, p.id ${shape.order}`)
      .limit(shape.limit + 1)
      .toKnexQuery();
  },
);

export const listPostAnalytics = defineOperation({
  name: 'analytics.posts',
  summary: "Per-post metrics of a project's published posts, sortable by each metric, cursor-paginated.",
  ...ANALYTICS_READ,
  input: listPostAnalyticsInput,
  output: page(postAnalyticsSchema),
  handler: async ({ auth }, input) => {
    const project = await resolveProjectOrDefault(auth, input.projectId);
    const limit = parseLimit(input.limit);
    const sort: SortKey = input.sort ?? 'publishedAt';
    const order = input.order ?? 'desc';
    const filters = { projectId: project.id, sort, order, from: input.from, to: input.to };
    let cursor: { value: Date | number; id: string } | null = null;
    const pos = await decodeSortCursor(input.cursor, filters);
    if (pos) {
      const value = sort === 'publishedAt' ? new Date(String(pos.value)) : Number(pos.value);
      if (sort === 'publishedAt' ? Number.isNaN((value as Date).getTime()) : !Number.isFinite(value as number)) throw errors.badCursor();
      cursor = { value, id: pos.id };
    }
    // Compiled once per shape and read as plain rows in a prepared statement, as the post list
    // is: the page is presented here, so neither objection's model instances nor knex's runner
    // (nor building the query per request) earn their cost; its instants as ISO strings cut from
    // Postgres' text, not Dates formatted back.
    const rows = await readPrepared<any>(
      postAnalyticsPage(
        { sort, order, from: input.from !== undefined, to: input.to !== undefined, cursor: cursor !== null, limit },
        {
          workspaceId: auth.workspaceId,
          projectId: project.id,
          from: input.from && periodBounds(input.from, input.from, project.timezone).start,
          to: input.to && periodBounds(input.to, input.to, project.timezone).end,
          cursorValue: cursor?.value,
          cursorId: cursor?.id,
        },
      ),
      { types: TIMESTAMPS_AS_ISO },
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      // Added to postFigures' object, not spread into a new one (see postFigures).
      data: page.map((r) =>
        Object.assign(postFigures(r), {
          networkPostUrn: r.network_post_urn,
          samples: r.samples ?? 0,
          lastSyncedAt: r.last_synced_at ? isoOf(r.last_synced_at) : null,
          sync: { state: r.sync_state ?? 'pending', detail: r.sync_state === 'blocked' || r.sync_state === 'failed' ? r.last_error : null },
        }),
      ),
      pagination: {
        next_cursor:
          rows.length > limit && last
            ? encodeSortCursor({ value: sort === 'publishedAt' ? isoOf(last.published_at) : Number(last.sort_value), id: last.id }, filters)
            : null,
        has_more: rows.length > limit,
      },
    };
  },
});

// ---- across workspaces (spec 5.5) ----

export const getCrossWorkspaceOverview = defineOperation({
  name: 'analytics.crossWorkspace',
  summary: 'Totals of every workspace the credential reaches, one row per workspace.',
  ...ANALYTICS_READ,
  input: getCrossWorkspaceOverviewInput,
  output: single(crossWorkspaceOverviewSchema),
  handler: async ({ auth }, input) => {
    // Workspaces span timezones: the period is read in UTC days.
    const { from, to } = period(input, 'UTC');
    const { start, end } = periodBounds(from, to, 'UTC');
    // The workspaces read, each with how the credential reaches it and sees its projects.
    let readers: Array<Reach & { name: string; reach: string }>;
    if (auth.principal.type === 'oauth_token') {
      const userId = auth.principal.actingUserId;
      // spec 1 rule 2 / 5.5: only workspaces whose effective plan (the agency's when billed
      // to one) includes API access; the rest could not be read one by one either.
      const reachable = (await reachableWorkspaces(userId)).filter((w) => planAllowsApi(w.plan));
      // spec 5.5: agency owners act as admins; plain members see their assigned projects.
      const access = await workspaceAccesses(
        userId,
        reachable.map((w) => w.id),
      );
      readers = reachable.flatMap((w) => {
        const a = access.get(w.id);
        return a ? [{ workspaceId: w.id, projectIds: a.projectIds, name: w.name, reach: w.reach }] : [];
      });
    } else {
      const w = (await Workspace.current(auth.workspaceId).select('id', 'name'))!;
      readers = [{ workspaceId: w.id, projectIds: auth.projectIds, name: w.name, reach: 'member' }];
    }
    const totals = await periodTotals(db(), readers, start, end);
    const rows = readers.map(({ workspaceId, name, reach }) => {
      const { projects, totals: t } = totals.get(workspaceId)!;
      return { workspaceId, name, reach, projects, ...t };
    });
    const sum = totalsOf(
      rows.reduce(
        (a, r) => ({
          posts: a.posts + r.posts,
          impressions: a.impressions + r.impressions,
          reactions: a.reactions + r.reactions,
          comments: a.comments + r.comments,
          reshares: a.reshares + r.reshares,
        }),
        { posts: 0, impressions: 0, reactions: 0, comments: 0, reshares: 0 },
      ),
    );
    return { data: { from, to, workspaces: rows, totals: sum } };
  },
});

// ---- viral posts ----

export const searchViralPosts = defineOperation({
  name: 'analytics.viralPosts',
  summary: 'Keyword search over high-performing public posts of the network, ranked by engagement.',
  kind: 'read',
  scopes: SCOPE,
  clientRole: 'deny',
  input: searchViralPostsInput,
  errors: ['conflict', 'temporarily_unavailable'],
  output: viralPostsListSchema,
  handler: async (ctx, input) => {
    const { auth } = ctx;
    const { network } = depsOf(ctx);
    const limit = parseLimit(input.limit, 20, 50);
    if (input.from && input.to && input.to < input.from) throw errors.invalidRequest('`to` must not be before `from`.');
    // The search goes through a connected account of the workspace: the named project's, or
    // the first visible project whose connection can be used.
    const candidates = input.projectId !== undefined ? [await findProject(auth, input.projectId)] : await usableProjects(auth);
    if (input.projectId !== undefined && !candidates[0]) throw errors.notFound('project');
    for (const project of candidates) {
      if (!project?.connection_id) continue;
      // Every call for the connection reports to its streak through the one rule (lib/publishing/probe.ts).
      const step = await db().transaction((trx) => connectionToken(trx, network, project.connection_id!));
      if (!step.ok) {
        if (isNetworkError(step.failure) && step.failure.kind === 'transient') throw searchUnavailable(step.failure.retryAfterMs);
        continue;
      }
      const { token } = step;
      try {
        const r = await network.searchViralPosts(token, {
          keywords: input.query,
          count: limit,
          minEngagement: input.minEngagement,
          publishedAfter: input.from ? new Date(`${input.from}T00:00:00Z`) : undefined,
          publishedBefore: input.to ? new Date(Date.parse(`${input.to}T00:00:00Z`) + 86_400_000) : undefined,
        });
        await recordCall(db(), project.connection_id, 'read', 'ok');
        return {
          data: r.posts.map((p) => ({
            postUrn: p.postUrn,
            author: { name: p.authorName, username: p.authorVanityName },
            text: p.text,
            publishedAt: p.publishedAt.toISOString(),
            impressions: p.impressions,
            reactions: p.likes,
            comments: p.comments,
            reshares: p.reshares,
            engagements: p.engagement,
            engagementRate: p.impressions > 0 ? Math.round((p.engagement / p.impressions) * 10_000) / 10_000 : 0,
          })),
          meta: { query: input.query, total: r.total, searchedAs: project.id },
        };
      } catch (err) {
        if (!isNetworkError(err)) throw err;
        await recordCall(db(), project.connection_id, 'read', err);
        if (err.kind === 'auth') continue;
        if (err.kind === 'transient') throw searchUnavailable(err.retryAfterMs);
        throw errors.unprocessable(`The network refused the search: ${err.message}`);
      }
    }
    throw errors.conflict('No connected account of this workspace can be used to search the network; reconnect one in the dashboard.', {
      reason: 'no_usable_connection',
      reconnectUrl: null,
      retryable: false,
    });
  },
});

function searchUnavailable(retryAfterMs: number | null): ApiError {
  return new ApiError('temporarily_unavailable', 'The network did not answer the search; retry shortly.', undefined, {
    'Retry-After': String(Math.ceil((retryAfterMs ?? 5_000) / 1000)),
  });
}

async function usableProjects(auth: AuthContext) {
  const rows = await Project.activeFor(auth)
    .join('network_connections as c', 'c.id', 'projects.connection_id')
    .whereNotNull('c.access_token_enc')
    .whereNull('c.revoked_at')
    .whereNot('c.connection_status', 'REVOKED')
    .orderBy([
      { column: 'projects.created_at', order: 'asc' },
      { column: 'projects.id', order: 'asc' },
    ])
    .limit(5)
    .select('projects.id', 'projects.connection_id');
  return rows as Array<{ id: string; connection_id: string | null }>;
}
