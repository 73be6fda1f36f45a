// A local video-transcript service for development and tests (docs/knowledge.md "YouTube
// ingest"): a real HTTP server answering the API lib/knowledge/youtube.ts speaks, so the client's
// whole path (URL building, status handling, JSON, timeouts) runs without the internet.
//
//   GET  /v1/transcripts/{videoId}   200 { videoId, title, channel, language, segments: [{ start, duration, text }] }
//                                    404 { error: { code: 'video_not_found', message } }
//   POST /__sim/videos               control: add or replace a video (the same shape as the 200 answer)
//   POST /__sim/fail-next            control: { count, status } makes the next transcript calls fail
//   GET  /__sim/state                control: how many transcript calls were answered

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface SimVideo {
  videoId: string;
  title: string;
  channel: string;
  language: string;
  segments: Array<{ start: number; duration: number; text: string }>;
}

/** Videos every simulator starts with, so local runs have something to ingest. */
export const DEFAULT_VIDEOS: SimVideo[] = [
  {
    videoId: 'dQw4w9WgXcQ',
    title: 'Writing posts people finish reading',
    channel: 'Content Lab',
    language: 'en',
    segments: [
      { start: 0, duration: 4.2, text: 'Welcome back to the channel.' },
      { start: 4.2, duration: 6.1, text: 'Today we talk about hooks: the first line decides whether anyone reads the second.' },
      { start: 10.3, duration: 5.4, text: 'Posts with a concrete number in the hook get more comments than vague ones.' },
      { start: 15.7, duration: 6.0, text: 'Keep paragraphs to two sentences and end with a question your reader can answer.' },
    ],
  },
];

export interface YoutubeSim {
  url: string;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const parts: Buffer[] = [];
  for await (const p of req) parts.push(p as Buffer);
  try {
    return JSON.parse(Buffer.concat(parts).toString('utf8') || 'null');
  } catch {
    return null;
  }
}

export async function startYoutubeSim(opts: { port?: number; host?: string } = {}): Promise<YoutubeSim> {
  const videos = new Map(DEFAULT_VIDEOS.map((v) => [v.videoId, v]));
  const failures: number[] = [];
  let answered = 0;
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://sim');
      if (req.method === 'POST' && url.pathname === '/__sim/videos') {
        const v = (await readJson(req)) as SimVideo | null;
        if (!v || typeof v.videoId !== 'string' || !Array.isArray(v.segments))
          return json(res, 400, { error: 'videoId and segments required' });
        videos.set(v.videoId, v);
        return json(res, 200, { ok: true });
      }
      if (req.method === 'POST' && url.pathname === '/__sim/fail-next') {
        const b = (await readJson(req)) as { count?: number; status?: number } | null;
        for (let i = 0; i < (b?.count ?? 1); i++) failures.push(b?.status ?? 503);
        return json(res, 200, { ok: true });
      }
      if (req.method === 'GET' && url.pathname === '/__sim/state') return json(res, 200, { answered, videos: videos.size });
      const m = /^\/v1\/transcripts\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'GET' && m) {
        const failure = failures.shift();
        if (failure !== undefined) return json(res, failure, { error: { code: 'unavailable', message: 'Simulated failure.' } });
        answered++;
        const video = videos.get(decodeURIComponent(m[1]!));
        if (!video) return json(res, 404, { error: { code: 'video_not_found', message: 'No transcript for this video.' } });
        return json(res, 200, video);
      }
      json(res, 404, { error: { code: 'not_found', message: 'No such route.' } });
    })().catch(() => {
      if (!res.headersSent) json(res, 500, { error: { code: 'internal', message: 'Simulator error.' } });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
