// Engagement after publish (docs/engagement.md): a like or a comment on a post the network
// holds, by a person or organization the token may act as; the record is sim/network/engagement.ts.

import type { IncomingMessage } from 'node:http';
import { jsonObjectOf, restError, type SimResponse } from '../responses';
import { parseAuthorUrn, type Person } from '../state';
import { REFERENCE_HEADER, versioned, type Routes, type SimContext } from './common';

function engage(
  ctx: SimContext,
  caller: Person,
  req: IncomingMessage,
  rawBody: Buffer,
  actorParam: string | null,
  kind: 'like' | 'comment',
): SimResponse {
  const body = jsonObjectOf(rawBody);
  if (!body) return restError(400, 'INVALID_REQUEST_BODY', 'body must be a JSON object');
  const actor = parseAuthorUrn(kind === 'like' ? (actorParam ?? '') : String(body.actor ?? ''));
  if (!actor) return restError(422, 'INVALID_ACTOR', 'actor must be urn:li:person:<id> or urn:li:organization:<id>');
  const s = ctx.state;
  if (!s.mayActAs(caller.id, actor))
    return restError(403, 'ACCESS_DENIED', `Not enough permissions to act as urn:li:${actor.type}:${actor.id}`);
  const postUrn = String(kind === 'like' ? body.root : body.object);
  if (!s.postsByUrn.has(postUrn)) return restError(404, 'NOT_FOUND', `no post ${postUrn}`);
  const actorUrn = `urn:li:${actor.type}:${actor.id}`;
  const ref = req.headers[REFERENCE_HEADER.toLowerCase()];
  const reference = typeof ref === 'string' && ref !== '' ? ref : null;
  let answer;
  if (kind === 'like') {
    if (body.reactionType !== 'LIKE') return restError(422, 'INVALID_REACTION', 'only LIKE reactions are supported');
    answer = s.engagement.like(postUrn, actorUrn, Date.now());
  } else {
    const text = (body.message as { text?: unknown } | undefined)?.text;
    if (typeof text !== 'string' || text.trim() === '') return restError(422, 'INVALID_MESSAGE', 'message.text must be a non-empty string');
    answer = s.engagement.comment(postUrn, actorUrn, text, reference, Date.now());
  }
  return { status: answer.status, headers: { 'x-restli-id': answer.id } };
}

export const engagementRoutes: Routes = {
  'POST /rest/reactions': {
    operation: 'like',
    style: 'rest',
    handle: versioned((ctx, caller, req, url, rawBody) => engage(ctx, caller, req, rawBody, url.searchParams.get('actor'), 'like')),
  },
  'POST /rest/comments': {
    operation: 'comment',
    style: 'rest',
    handle: versioned((ctx, caller, req, _url, rawBody) => engage(ctx, caller, req, rawBody, null, 'comment')),
  },
};
