// Planning additions to the network simulator (docs/network-protocol.md "Metrics growth" and
// "GET /rest/viralPosts"), kept apart from the routes that use them
// (routes/posts.ts, routes/planning.ts):
//
// - organic growth: when enabled, a post's metrics grow with its age as a real post's do (fast
//   in the first day, flattening after), on top of any values set through the control API;
// - the viral-post corpus: a seeded, deterministic set of high-performing public posts that the
//   search endpoint ranks by engagement, plus posts a test adds through the control API.

import type { MetricsGrowthInput, MetricsGrowthSettings, SimPostMetrics, ViralPostInput } from './control';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

function hash32(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}

export class MetricsGrowth {
  settings: MetricsGrowthSettings = {
    enabled: process.env.NETWORK_SIM_METRICS_GROWTH === '1',
    timeScale: Number(process.env.NETWORK_SIM_METRICS_TIME_SCALE ?? '1') || 1,
  };

  set(input: MetricsGrowthInput): MetricsGrowthSettings {
    if (typeof input !== 'object' || input === null || typeof input.enabled !== 'boolean') throw new Error('enabled must be a boolean');
    const scale = input.timeScale ?? 1;
    if (typeof scale !== 'number' || !Number.isFinite(scale) || scale <= 0 || scale > 1e7)
      throw new Error('timeScale must be a positive number');
    this.settings = { enabled: input.enabled, timeScale: scale };
    return { ...this.settings };
  }

  /**
   * The metrics the network shows now: the stored values plus organic growth. Each post has its
   * own ceiling (from its URN) and reaches 1 - e^(-age/24h) of it, so most of the reach comes in
   * the first day and the curve is flat after a week. Counters never go down as time passes.
   */
  apply(urn: string, receivedAt: number, stored: SimPostMetrics, now = Date.now()): SimPostMetrics {
    if (!this.settings.enabled) return stored;
    const h = hash32(urn);
    const ageMs = Math.max(0, now - receivedAt) * this.settings.timeScale;
    const reached = 1 - Math.exp(-ageMs / DAY_MS);
    const ceiling = 400 + (h % 20_000);
    const impressions = Math.floor(ceiling * reached);
    const likeRate = 0.01 + ((h >>> 8) % 60) / 1000; // 1% .. 7%
    const likes = Math.floor(impressions * likeRate);
    return {
      impressions: stored.impressions + impressions,
      likes: stored.likes + likes,
      comments: stored.comments + Math.floor(likes * 0.15),
      reshares: stored.reshares + Math.floor(likes * 0.05),
    };
  }
}

export interface ViralRecord {
  urn: string;
  authorName: string;
  authorVanityName: string | null;
  text: string;
  publishedAt: number;
  impressions: number;
  likes: number;
  comments: number;
  reshares: number;
}

const TOPICS: ReadonlyArray<{ words: string; lines: readonly string[] }> = [
  {
    words: 'hiring recruiting interviews',
    lines: [
      'We rewrote our hiring process from scratch.',
      'The best interview question I know takes two minutes.',
      'Stop asking candidates for unpaid take-home work.',
    ],
  },
  {
    words: 'leadership management teams',
    lines: [
      'Leadership is mostly about removing obstacles.',
      'My worst management mistake taught me the most.',
      'Your team does not need more meetings.',
    ],
  },
  {
    words: 'ai machine learning automation',
    lines: [
      'AI will not replace you; a person using AI might.',
      'We automated our reporting with machine learning and saved a day a week.',
      'The AI tools our team actually uses every day.',
    ],
  },
  {
    words: 'remote work productivity',
    lines: [
      'Three years of remote work: what stuck.',
      'Productivity is not hours at a desk.',
      'Async first changed how our remote team works.',
    ],
  },
  {
    words: 'sales customers pipeline',
    lines: [
      'The cold email that booked 40 meetings.',
      'Customers buy outcomes, not features.',
      'How we doubled our sales pipeline in a quarter.',
    ],
  },
  {
    words: 'startup founder fundraising',
    lines: [
      'What I wish I knew before founding a startup.',
      'We were rejected by 60 investors before our round closed.',
      'Founder burnout is real; here is how I recovered.',
    ],
  },
  {
    words: 'career growth learning',
    lines: [
      'The career advice I would give my younger self.',
      'Learning in public grew my career faster than any course.',
      'You do not need permission to grow.',
    ],
  },
  {
    words: 'marketing content brand',
    lines: [
      'Our best-performing content was the simplest.',
      'Brand is what people say when you leave the room.',
      'Marketing that teaches beats marketing that shouts.',
    ],
  },
];

/** A deterministic PRNG so the seeded corpus is the same in every run. */
function mulberry32(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let viralSeq = 7_000_000_000;

export class ViralCorpus {
  private posts: ViralRecord[] = [];
  private seeded = false;

  /** 480 posts over the last 180 days with heavy-tailed engagement, made on first use. */
  private seed(now: number): void {
    if (this.seeded) return;
    this.seeded = true;
    const rand = mulberry32(20261125);
    const names = ['Ada Park', 'Ben Ode', 'Chloe Rami', 'Dev Patel', 'Eva Lund', 'Femi Ade', 'Gia Russo', 'Hugo Blanc'];
    for (let i = 0; i < 480; i++) {
      const topic = TOPICS[i % TOPICS.length]!;
      const line = topic.lines[Math.floor(rand() * topic.lines.length)]!;
      const impressions = Math.floor(5_000 + rand() ** 3 * 900_000);
      const likes = Math.floor(impressions * (0.01 + rand() * 0.05));
      const name = names[Math.floor(rand() * names.length)]!;
      this.posts.push({
        urn: `urn:li:ugcPost:${++viralSeq}`,
        authorName: name,
        authorVanityName: name.toLowerCase().replace(/[^a-z]+/g, '-'),
        text: `${line}\n\nThoughts on ${topic.words}.`,
        publishedAt: now - Math.floor(rand() * 180 * DAY_MS),
        impressions,
        likes,
        comments: Math.floor(likes * (0.05 + rand() * 0.2)),
        reshares: Math.floor(likes * rand() * 0.1),
      });
    }
  }

  add(inputs: ViralPostInput[]): { total: number } {
    this.seed(Date.now());
    if (!Array.isArray(inputs) || inputs.length > 10_000) throw new Error('posts must be an array of at most 10,000');
    for (const p of inputs) {
      const at = Date.parse(p?.publishedAt);
      const counts = [p?.impressions, p?.likes, p?.comments, p?.reshares];
      if (
        typeof p?.authorName !== 'string' ||
        typeof p.text !== 'string' ||
        Number.isNaN(at) ||
        counts.some((c) => !Number.isInteger(c) || (c as number) < 0)
      ) {
        throw new Error('each post needs authorName, text, publishedAt and non-negative integer impressions, likes, comments, reshares');
      }
      this.posts.push({
        urn: `urn:li:ugcPost:${++viralSeq}`,
        authorName: p.authorName,
        authorVanityName: null,
        text: p.text,
        publishedAt: at,
        impressions: p.impressions,
        likes: p.likes,
        comments: p.comments,
        reshares: p.reshares,
      });
    }
    return { total: this.posts.length };
  }

  /** Every keyword must appear (case-insensitive); ranked by engagement, then recency, then URN. */
  search(q: {
    keywords: string;
    publishedAfter: number | null;
    publishedBefore: number | null;
    minEngagement: number;
    start: number;
    count: number;
  }) {
    this.seed(Date.now());
    const words = q.keywords.toLowerCase().split(/\s+/).filter(Boolean);
    const hits = this.posts.filter((p) => {
      const text = `${p.text} ${p.authorName}`.toLowerCase();
      const engagement = p.likes + p.comments + p.reshares;
      return (
        words.every((w) => text.includes(w)) &&
        engagement >= q.minEngagement &&
        (q.publishedAfter === null || p.publishedAt >= q.publishedAfter) &&
        (q.publishedBefore === null || p.publishedAt < q.publishedBefore)
      );
    });
    const eng = (p: ViralRecord) => p.likes + p.comments + p.reshares;
    hits.sort((a, b) => eng(b) - eng(a) || b.publishedAt - a.publishedAt || (a.urn < b.urn ? -1 : 1));
    return {
      elements: hits.slice(q.start, q.start + q.count).map((p) => ({
        id: p.urn,
        author: { name: p.authorName, vanityName: p.authorVanityName },
        commentary: p.text,
        publishedAt: p.publishedAt,
        metrics: { impressions: p.impressions, likes: p.likes, comments: p.comments, reshares: p.reshares },
        engagement: eng(p),
      })),
      paging: { start: q.start, count: q.count, total: hits.length },
    };
  }
}
