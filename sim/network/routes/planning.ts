// Planning (docs/network-protocol.md, `GET /rest/viralPosts`): keyword search over the viral-post
// corpus the control API fills (sim/network/planning.ts).

import { restError } from '../responses';
import { versioned, type Routes } from './common';

export const planningRoutes: Routes = {
  'GET /rest/viralPosts': {
    operation: 'search',
    style: 'rest',
    handle: versioned((ctx, _caller, _req, url) => {
      const q = url.searchParams;
      if (q.get('q') !== 'search') return restError(400, 'ILLEGAL_ARGUMENT', 'q=search is required');
      const keywords = (q.get('keywords') ?? '').trim();
      if (!keywords || keywords.length > 200) return restError(400, 'ILLEGAL_ARGUMENT', 'keywords must be 1 to 200 characters');
      const num = (name: string, min: number, max: number, fallback: number | null) => {
        const v = q.get(name);
        if (v === null || v === '') return fallback;
        const n = Number(v);
        return Number.isInteger(n) && n >= min && n <= max ? n : undefined;
      };
      const start = num('start', 0, 10_000, 0);
      const count = num('count', 1, 100, 20);
      const minEngagement = num('minEngagement', 0, Number.MAX_SAFE_INTEGER, 0);
      const after = num('publishedAfter', 0, Number.MAX_SAFE_INTEGER, null);
      const before = num('publishedBefore', 0, Number.MAX_SAFE_INTEGER, null);
      if ([start, count, minEngagement, after, before].includes(undefined))
        return restError(
          400,
          'ILLEGAL_ARGUMENT',
          'start, count, minEngagement, publishedAfter and publishedBefore must be integers in range',
        );
      return {
        status: 200,
        body: ctx.viral.search({
          keywords,
          start: start!,
          count: count!,
          minEngagement: minEngagement!,
          publishedAfter: after ?? null,
          publishedBefore: before ?? null,
        }),
      };
    }),
  },
};
