// The client of the video-transcript service behind YouTube ingest (docs/knowledge.md "YouTube
// ingest"; config YOUTUBE_TRANSCRIPT_URL, the local simulator sim/youtube when unset). One HTTP
// call per ingest attempt; retries belong to the activity's retry policy.

import { HttpTransport, noAnswer, OutboundError, parseJson, statusVerdict, type TransportErrors } from '../outbound/outbound';

export const VIDEO_ID = /^[A-Za-z0-9_-]{11}$/;

/** The 11-character id of a YouTube URL or bare id, or null. */
export function videoIdOf(input: string): string | null {
  const s = input.trim();
  if (VIDEO_ID.test(s)) return s;
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return null;
  }
  const host = url.hostname.toLowerCase().replace(/^(www\.|m\.|music\.)/, '');
  let id: string | null = null;
  if (host === 'youtu.be') id = url.pathname.slice(1).split('/')[0] ?? null;
  else if (host === 'youtube.com' || host === 'youtube-nocookie.com') {
    id = url.searchParams.get('v');
    const m = /^\/(?:embed|shorts|live|v)\/([^/?#]+)/.exec(url.pathname);
    if (!id && m) id = m[1]!;
  }
  return id && VIDEO_ID.test(id) ? id : null;
}

export interface Transcript {
  videoId: string;
  title: string;
  channel: string | null;
  language: string | null;
  text: string;
  durationSeconds: number;
}

export class TranscriptError extends OutboundError {
  readonly service = 'youtube';
  declare readonly code: 'video_not_found' | 'transcript_unavailable' | 'transcript_timeout';
}

function transcriptErrors(videoId: string): TransportErrors {
  return {
    ...noAnswer(TranscriptError, 'transcript service', { timeout: 'transcript_timeout', unreachable: 'transcript_unavailable' }),
    status: ({ status }) =>
      status === 404
        ? new TranscriptError('video_not_found', `No transcript exists for video ${videoId}.`, statusVerdict(status))
        : new TranscriptError('transcript_unavailable', `The transcript service answered HTTP ${status}.`, statusVerdict(status)),
  };
}

export interface TranscriptClient {
  fetch(videoId: string, signal?: AbortSignal): Promise<Transcript>;
}

export class HttpTranscriptClient implements TranscriptClient {
  private readonly transport: HttpTransport;

  constructor(opts: { baseUrl: string; timeoutMs: number }) {
    this.transport = new HttpTransport('transcript service', opts);
  }

  async fetch(videoId: string, signal?: AbortSignal): Promise<Transcript> {
    const { text } = await this.transport.send(
      { path: `v1/transcripts/${encodeURIComponent(videoId)}`, signal },
      transcriptErrors(videoId),
    );
    const body = parseJson(text) as
      | {
          title?: string;
          channel?: string;
          language?: string;
          segments?: Array<{ start?: number; duration?: number; text?: string }>;
        }
      | null
      | undefined;
    if (!body || !Array.isArray(body.segments))
      throw new TranscriptError('transcript_unavailable', 'The transcript service answered without segments.', {
        failure: 'bad_response',
        retryable: true,
      });
    const segments = body.segments.filter((s) => typeof s.text === 'string' && s.text.trim());
    const last = segments[segments.length - 1];
    return {
      videoId,
      title: body.title?.trim() || `YouTube video ${videoId}`,
      channel: body.channel ?? null,
      language: body.language ?? null,
      text: segments.map((s) => s.text!.trim()).join('\n'),
      durationSeconds: last ? Math.round((last.start ?? 0) + (last.duration ?? 0)) : 0,
    };
  }
}

/** The configured transcript service, or the local simulator's address (npm start and the tests start it). */
export function createTranscriptClient(opts: { baseUrl?: string; port: number; timeoutMs: number }): TranscriptClient {
  return new HttpTranscriptClient({ baseUrl: opts.baseUrl ?? `http://127.0.0.1:${opts.port}`, timeoutMs: opts.timeoutMs });
}
