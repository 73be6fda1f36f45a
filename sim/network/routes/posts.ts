// Posts (docs/network-protocol.md, `POST /rest/posts`, `GET /rest/posts`, `GET /rest/posts/{post
// URN}` and `GET /rest/socialMetadata/{post URN}`): create with a client reference that names one
// publication (a retry with the same reference answers the original post), find by reference,
// read one post and its metrics.

import { restError, jsonObjectOf, mediaTypeOf } from '../responses';
import { MAX_REFERENCE_CHARS, parseAuthorUrn, type PostRecord } from '../state';
import { REFERENCE_HEADER, versioned, type Routes } from './common';
import { imagesOfContent } from './images';

/** The network's limit on post text; longer posts fail with 422, as they would in production. */
const MAX_COMMENTARY_CHARS = 3_000;

function postView(p: PostRecord): Record<string, unknown> {
  return {
    id: p.urn,
    author: p.author,
    commentary: p.text,
    visibility: p.visibility,
    lifecycleState: p.lifecycleState,
    distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
    isReshareDisabledByAuthor: false,
    ...(p.images.length === 1 ? { content: { media: { id: p.images[0]!.imageUrn, altText: p.images[0]!.altText } } } : {}),
    ...(p.images.length > 1 ? { content: { multiImage: { images: p.images.map((i) => ({ id: i.imageUrn, altText: i.altText })) } } } : {}),
    reference: p.reference,
    createdAt: p.receivedAt,
    publishedAt: p.receivedAt,
    lastModifiedAt: p.receivedAt,
  };
}

export const postRoutes: Routes = {
  'POST /rest/posts': {
    operation: 'createPost',
    style: 'rest',
    handle: versioned((ctx, caller, req, _url, rawBody) => {
      if (mediaTypeOf(req) !== 'application/json') return restError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
      const body = jsonObjectOf(rawBody);
      if (!body) return restError(400, 'INVALID_REQUEST_BODY', 'body must be a JSON object');
      const author = typeof body.author === 'string' ? parseAuthorUrn(body.author) : null;
      if (!author) return restError(422, 'INVALID_AUTHOR', 'author must be urn:li:person:<id> or urn:li:organization:<id>');
      if (typeof body.commentary !== 'string' || body.commentary.trim() === '')
        return restError(422, 'INVALID_COMMENTARY', 'commentary must be a non-empty string');
      if (body.commentary.length > MAX_COMMENTARY_CHARS)
        return restError(422, 'COMMENTARY_TOO_LONG', `commentary is longer than ${MAX_COMMENTARY_CHARS} characters`);
      const visibility = body.visibility ?? 'PUBLIC';
      if (visibility !== 'PUBLIC' && visibility !== 'CONNECTIONS' && visibility !== 'LOGGED_IN')
        return restError(422, 'INVALID_VISIBILITY', 'visibility must be PUBLIC, CONNECTIONS or LOGGED_IN');
      const lifecycleState = body.lifecycleState ?? 'PUBLISHED';
      if (lifecycleState !== 'PUBLISHED') return restError(422, 'INVALID_LIFECYCLE_STATE', 'only PUBLISHED posts are supported');
      const s = ctx.state;
      const content = imagesOfContent(s, body.content, `urn:li:${author.type}:${author.id}`);
      if ('error' in content) return content.error;
      const refHeader = req.headers[REFERENCE_HEADER.toLowerCase()];
      let reference: string | null = null;
      if (refHeader !== undefined) {
        if (typeof refHeader !== 'string' || refHeader === '' || refHeader.length > MAX_REFERENCE_CHARS) {
          return restError(400, 'INVALID_IDEMPOTENCY_KEY', `${REFERENCE_HEADER} must be 1 to ${MAX_REFERENCE_CHARS} characters`);
        }
        reference = refHeader;
      }
      // Authorization before the replay lookup: a revoked admin must not learn, or be told
      // "success" about, a post it may no longer write.
      if (!s.mayActAs(caller.id, author)) {
        return restError(403, 'ACCESS_DENIED', `Not enough permissions to post as urn:li:${author.type}:${author.id}`);
      }
      const authorUrn = `urn:li:${author.type}:${author.id}`;
      const now = Date.now();
      s.counts.createCalls++;
      if (reference !== null) {
        const existing = s.postsByAuthorRef.get(`${authorUrn}\n${reference}`);
        if (existing) {
          // The original post, whatever the retry's text: the reference names one publication.
          existing.createCalls++;
          existing.lastCallAt = now;
          s.counts.replays++;
          return { status: 200, headers: { 'x-restli-id': existing.urn, 'x-idempotent-replayed': 'true' } };
        }
      }
      const post = s.recordPost({
        author,
        createdBy: caller.id,
        text: body.commentary,
        reference,
        visibility,
        lifecycleState,
        now,
        createCalls: 1,
        images: content.images,
      });
      return {
        status: 201,
        headers: { 'x-restli-id': post.urn, location: `/rest/posts/${encodeURIComponent(post.urn)}`, 'x-idempotent-replayed': 'false' },
      };
    }),
  },
  'GET /rest/posts': {
    operation: 'findPost',
    style: 'rest',
    handle: versioned((ctx, caller, _req, url, _body, param) => {
      const s = ctx.state;
      if (param !== null) {
        const post = s.postsByUrn.get(param);
        if (!post) return restError(404, 'NOT_FOUND', `no post ${param}`);
        if (!s.mayActAs(caller.id, { type: post.authorType, id: post.authorId }))
          return restError(403, 'ACCESS_DENIED', 'Not enough permissions to read this post');
        return { status: 200, body: postView(post) };
      }
      const q = url.searchParams;
      if (q.get('q') !== 'reference') return restError(400, 'ILLEGAL_ARGUMENT', 'only the q=reference finder is supported');
      const author = parseAuthorUrn(q.get('author') ?? '');
      const reference = q.get('reference');
      if (!author) return restError(400, 'ILLEGAL_ARGUMENT', 'author must be urn:li:person:<id> or urn:li:organization:<id>');
      if (!reference) return restError(400, 'ILLEGAL_ARGUMENT', 'reference is required');
      if (!s.mayActAs(caller.id, author))
        return restError(403, 'ACCESS_DENIED', `Not enough permissions to read posts of urn:li:${author.type}:${author.id}`);
      const post = s.postsByAuthorRef.get(`urn:li:${author.type}:${author.id}\n${reference}`);
      const elements = post ? [postView(post)] : [];
      return { status: 200, body: { elements, paging: { start: 0, count: 1, total: elements.length, links: [] } } };
    }),
  },
  'GET /rest/socialMetadata': {
    operation: 'metrics',
    style: 'rest',
    handle: versioned((ctx, caller, _req, _url, _body, param) => {
      if (param === null) return restError(400, 'ILLEGAL_ARGUMENT', 'a post URN is required: /rest/socialMetadata/{postUrn}');
      const post = ctx.state.postsByUrn.get(param);
      if (!post) return restError(404, 'NOT_FOUND', `no post ${param}`);
      if (!ctx.state.mayActAs(caller.id, { type: post.authorType, id: post.authorId }))
        return restError(403, 'ACCESS_DENIED', 'Not enough permissions to read metrics of this post');
      // planning: organic growth on top of the scripted metrics (sim/network/planning.ts).
      const m = ctx.growth.apply(post.urn, post.receivedAt, post.metrics);
      return {
        status: 200,
        body: {
          entity: post.urn,
          reactionSummaries: m.likes > 0 ? { LIKE: { reactionType: 'LIKE', count: m.likes } } : {},
          commentSummary: { count: m.comments, topLevelCount: m.comments },
          shareStatistics: { impressionCount: m.impressions, shareCount: m.reshares },
          commentsState: 'OPEN',
        },
      };
    }),
  },
};
