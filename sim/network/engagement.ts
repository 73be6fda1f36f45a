// The simulator's record of engagement after publish (docs/engagement.md): likes and comments
// on the posts it holds, so tests can count them. Kept apart from routes/engagement.ts, which
// answers `POST /rest/reactions` and `POST /rest/comments` from here after its usual version,
// token and permission checks.
//
// The network's own rules, as the client relies on them: one LIKE reaction per actor and post
// (a second like answers 200 with the existing reaction); a comment carrying a reference that
// the same actor already used on the post answers 200 with the first comment.

import type { SimEngagement } from './control';

let commentSeq = Date.now() * 1000;

interface Like {
  actor: string;
  at: number;
  calls: number;
}
interface Comment {
  urn: string;
  actor: string;
  text: string;
  reference: string | null;
  at: number;
  calls: number;
}

export type EngagementAnswer = { status: 200 | 201; id: string };

export class EngagementStore {
  private readonly likes = new Map<string, Map<string, Like>>();
  private readonly comments = new Map<string, Comment[]>();
  private readonly commentsByRef = new Map<string, Comment>();

  like(postUrn: string, actor: string, now: number): EngagementAnswer {
    let byActor = this.likes.get(postUrn);
    if (!byActor) this.likes.set(postUrn, (byActor = new Map()));
    const existing = byActor.get(actor);
    if (existing) {
      existing.calls++;
      return { status: 200, id: `${actor}#${postUrn}` };
    }
    byActor.set(actor, { actor, at: now, calls: 1 });
    return { status: 201, id: `${actor}#${postUrn}` };
  }

  comment(postUrn: string, actor: string, text: string, reference: string | null, now: number): EngagementAnswer {
    const key = reference === null ? null : `${postUrn}\n${actor}\n${reference}`;
    const existing = key === null ? undefined : this.commentsByRef.get(key);
    if (existing) {
      existing.calls++;
      return { status: 200, id: existing.urn };
    }
    const c: Comment = { urn: `urn:li:comment:(${postUrn},${++commentSeq})`, actor, text, reference, at: now, calls: 1 };
    const list = this.comments.get(postUrn) ?? [];
    list.push(c);
    this.comments.set(postUrn, list);
    if (key !== null) this.commentsByRef.set(key, c);
    return { status: 201, id: c.urn };
  }

  of(postUrn: string): SimEngagement {
    return {
      postUrn,
      likes: [...(this.likes.get(postUrn)?.values() ?? [])].map((l) => ({
        actor: l.actor,
        at: new Date(l.at).toISOString(),
        calls: l.calls,
      })),
      comments: (this.comments.get(postUrn) ?? []).map((c) => ({ ...c, at: new Date(c.at).toISOString() })),
    };
  }

  /** Likes and comments a post received, as the network's metrics count them. */
  counts(postUrn: string): { likes: number; comments: number } {
    return { likes: this.likes.get(postUrn)?.size ?? 0, comments: this.comments.get(postUrn)?.length ?? 0 };
  }
}
