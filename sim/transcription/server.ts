// A local OpenAI-compatible transcription API (`POST /v1/audio/transcriptions`) for development
// and tests (docs/sources.md "Transcription"). A real HTTP server, so the client's whole path
// (multipart, headers, statuses, timeouts) is exercised, with faults injected per call.
//
// The transcript is deterministic and derived from the audio bytes: a recording that embeds a
// `TRANSCRIPT:` marker (test fixtures put one in a WAV chunk) is "heard" as the text after it,
// with an optional `LANG:xx;` prefix; any other recording gets sentences chosen by its SHA-256.
// The duration of a PCM WAV comes from its header; other formats get one second per 16 kB.

import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type TranscriptionFault = 'server_error' | 'rate_limited' | 'bad_request' | 'auth' | 'hang';

export interface TranscriptionSimRequest {
  model: string | null;
  responseFormat: string | null;
  filename: string | null;
  mimeType: string | null;
  bytes: number;
  authorization: string | null;
}

export interface TranscriptionSim {
  /** Base URL including `/v1`, ready for TRANSCRIPTION_URL. */
  url: string;
  requests: TranscriptionSimRequest[];
  failNext(n: number, kind: TranscriptionFault): void;
  setLatency(ms: number): void;
  reset(): void;
  close(): Promise<void>;
}

const PHRASES = [
  'Today I want to talk about how small teams ship faster.',
  'The biggest lesson of the last year was to write things down.',
  'Customers rarely ask for features; they ask for outcomes.',
  'We measured every release and the numbers surprised us.',
  'Hiring slowly turned out to be the best decision we made.',
  'Remote work changed how we run our weekly planning.',
  'Pricing is a product decision, not a finance one.',
  'What would you do with one more hour every day?',
  'Three habits helped our team stay focused during the launch.',
  'Feedback loops matter more than perfect plans.',
];

const MARKER = Buffer.from('TRANSCRIPT:');

/** The text a recording "says" and its language (see the header comment). */
export function simulatedTranscript(bytes: Buffer): { text: string; language: string } {
  const at = bytes.indexOf(MARKER);
  if (at >= 0) {
    let end = bytes.indexOf(0, at);
    if (end < 0) end = bytes.length;
    let text = bytes
      .subarray(at + MARKER.length, end)
      .toString('utf8')
      .trim();
    let language = 'english';
    const lang = /^LANG:([a-z]{2});/.exec(text);
    if (lang) {
      language = lang[1]!;
      text = text.slice(lang[0].length).trim();
    }
    return { text, language };
  }
  const digest = createHash('sha256').update(bytes).digest();
  const picked = [0, 1, 2, 3].map((i) => PHRASES[digest[i]! % PHRASES.length]!);
  return { text: [...new Set(picked)].join(' '), language: 'english' };
}

/** Seconds of a PCM WAV from its header (byte rate and data size); null for anything else. */
export function wavDurationSeconds(bytes: Buffer): number | null {
  if (bytes.length < 12 || bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE') return null;
  let offset = 12;
  let byteRate = 0;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    if (id === 'fmt ' && offset + 16 <= bytes.length) byteRate = bytes.readUInt32LE(offset + 16);
    if (id === 'data') return byteRate > 0 ? Math.round((size / byteRate) * 100) / 100 : null;
    offset += 8 + size + (size % 2);
  }
  return null;
}

function send(res: ServerResponse, status: number, body: unknown, type = 'application/json') {
  res.writeHead(status, { 'content-type': type });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export async function startTranscriptionSim(opts: { port?: number; host?: string; apiKey?: string } = {}): Promise<TranscriptionSim> {
  const faults: TranscriptionFault[] = [];
  let latencyMs = 0;
  const requests: TranscriptionSimRequest[] = [];
  const sockets = new Set<Socket>();
  const hung = new Set<ServerResponse>();

  const server = createServer(async (req, res) => {
    try {
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/__sim/state' && req.method === 'GET') return send(res, 200, { requests: requests.length, queuedFaults: faults });
      if (path === '/__sim/fail' && req.method === 'POST') {
        const body = JSON.parse((await readBody(req)).toString() || '{}') as { times?: number; kind?: TranscriptionFault };
        for (let i = 0; i < (body.times ?? 1); i++) faults.push(body.kind ?? 'server_error');
        return send(res, 200, { queuedFaults: faults });
      }
      if (path !== '/v1/audio/transcriptions' || req.method !== 'POST')
        return send(res, 404, { error: { message: 'Not found', type: 'invalid_request_error' } });

      const raw = await readBody(req);
      const auth = req.headers.authorization ?? null;
      const fault = faults.shift();
      if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs));
      if (fault === 'hang') {
        hung.add(res);
        return;
      }
      if (opts.apiKey && auth !== `Bearer ${opts.apiKey}`) return send(res, 401, { error: { message: 'Invalid API key', type: 'auth' } });
      if (fault === 'auth') return send(res, 401, { error: { message: 'Invalid API key', type: 'auth' } });
      if (fault === 'rate_limited') return send(res, 429, { error: { message: 'Rate limit reached', type: 'rate_limit' } });
      if (fault === 'server_error') return send(res, 500, { error: { message: 'The server had an error', type: 'server_error' } });
      if (fault === 'bad_request') return send(res, 400, { error: { message: 'Invalid file format', type: 'invalid_request_error' } });

      const form = await new Request('http://sim/', {
        method: 'POST',
        headers: req.headers as Record<string, string>,
        body: raw,
      }).formData();
      const file = form.get('file');
      const model = form.get('model');
      const format = form.get('response_format');
      const record: TranscriptionSimRequest = {
        model: typeof model === 'string' ? model : null,
        responseFormat: typeof format === 'string' ? format : null,
        filename: file instanceof File ? file.name : null,
        mimeType: file instanceof File ? file.type : null,
        bytes: file instanceof File ? file.size : 0,
        authorization: auth,
      };
      requests.push(record);
      if (!(file instanceof File)) return send(res, 400, { error: { message: 'file is required', type: 'invalid_request_error' } });
      if (!record.model) return send(res, 400, { error: { message: 'model is required', type: 'invalid_request_error' } });
      const bytes = Buffer.from(await file.arrayBuffer());
      const { text, language } = simulatedTranscript(bytes);
      const duration = wavDurationSeconds(bytes) ?? Math.max(1, Math.round(bytes.length / 16_000));
      if (record.responseFormat === 'text') return send(res, 200, text, 'text/plain');
      if (record.responseFormat === 'verbose_json')
        return send(res, 200, { task: 'transcribe', language, duration, text, segments: [{ id: 0, start: 0, end: duration, text }] });
      return send(res, 200, { text });
    } catch (err) {
      send(res, 500, { error: { message: err instanceof Error ? err.message : String(err), type: 'server_error' } });
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const releaseHung = () => {
    for (const r of hung) r.destroy();
    hung.clear();
  };
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}/v1`,
    requests,
    failNext(n, kind) {
      for (let i = 0; i < n; i++) faults.push(kind);
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    reset() {
      faults.length = 0;
      latencyMs = 0;
      requests.length = 0;
      releaseHung();
    },
    close: () =>
      new Promise<void>((resolve) => {
        releaseHung();
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
