import { config } from '../config';
import { IngestError } from './errors';

// Audio and video transcription (docs/sources.md "Transcription"): a client of an
// OpenAI-compatible `POST {base}/audio/transcriptions` (multipart: file, model,
// response_format=verbose_json). One provider call per `transcribe`; retries belong to the caller
// (the ingest activity under Temporal's retry policy), so every failure is an IngestError
// carrying `retryable`, decided from the HTTP status, never from the provider's prose.

export interface Transcript {
  text: string;
  /** ISO 639-1 when the provider names one (verbose_json says "english" or "en"). */
  language: string | null;
  durationSeconds?: number;
  /** What the provider billed for the call, in whole cents (settled on the job: docs/generation.md "Spend and budgets"). */
  costCents: number;
}

export interface TranscribeInput {
  bytes: Uint8Array;
  mimeType: string;
  filename: string;
}

export interface Transcriber {
  transcribe(input: TranscribeInput, opts?: { signal?: AbortSignal }): Promise<Transcript>;
}

export interface HttpTranscriberOptions {
  /** Includes the version path, as for the LLM: `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
  /** Hundredths of a cent per minute of audio. */
  pricePerMinute: number;
}

/**
 * Whole cents, rounded up as computeCostCents does for tokens: any billed call costs at least a
 * cent. Without the duration, the transcript's length stands in for it (about 900 characters a
 * spoken minute), so the charge never reads zero because the provider left it out.
 */
export function transcriptionCostCents(durationSeconds: number | undefined, text: string, pricePerMinute: number): number {
  const minutes = durationSeconds !== undefined ? durationSeconds / 60 : text.length / 900;
  return Math.max(1, Math.ceil((minutes * pricePerMinute) / 100));
}

// verbose_json names the language in English words; the service speaks ISO 639-1.
const LANGUAGE_NAMES: Record<string, string> = {
  english: 'en',
  french: 'fr',
  german: 'de',
  spanish: 'es',
  dutch: 'nl',
  portuguese: 'pt',
  italian: 'it',
  polish: 'pl',
  swedish: 'sv',
  danish: 'da',
  norwegian: 'no',
  finnish: 'fi',
  japanese: 'ja',
  chinese: 'zh',
  korean: 'ko',
  russian: 'ru',
  arabic: 'ar',
  turkish: 'tr',
  hindi: 'hi',
};

export function normalizeLanguage(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const v = value.trim().toLowerCase();
  if (/^[a-z]{2}(-[a-z0-9]{2,8})?$/.test(v)) return v.slice(0, 2);
  return LANGUAGE_NAMES[v] ?? null;
}

function statusFailure(status: number, body: string): IngestError {
  const detail = body.slice(0, 300);
  if (status === 401 || status === 403)
    return new IngestError('transcription_auth_failed', `The transcription API refused the credential (HTTP ${status}).`, { status });
  if (status === 429)
    return new IngestError('transcription_rate_limited', 'The transcription API is rate limiting this service.', { status });
  if (status === 408) return new IngestError('transcription_timeout', 'The transcription API timed out.', { status });
  if (status >= 500) return new IngestError('transcription_unavailable', `The transcription API failed (HTTP ${status}).`, { status });
  // 400, 413, 415, 422: the file or the request; another try sends the same thing.
  return new IngestError('transcription_rejected', `The transcription API rejected the file (HTTP ${status}): ${detail}`, { status });
}

export class HttpTranscriber implements Transcriber {
  private readonly endpoint: string;
  private readonly opts: HttpTranscriberOptions;

  constructor(opts: HttpTranscriberOptions) {
    let base: URL;
    try {
      base = new URL(opts.baseUrl);
    } catch {
      throw new Error(`TRANSCRIPTION_URL is not a valid URL: ${opts.baseUrl}`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error(`TRANSCRIPTION_URL must be http(s): ${opts.baseUrl}`);
    this.endpoint = `${base.href.replace(/\/+$/, '')}/audio/transcriptions`;
    this.opts = opts;
  }

  async transcribe(input: TranscribeInput, { signal: callerSignal }: { signal?: AbortSignal } = {}): Promise<Transcript> {
    callerSignal?.throwIfAborted();
    const form = new FormData();
    form.set('file', new Blob([input.bytes], { type: input.mimeType }), input.filename);
    form.set('model', this.opts.model);
    form.set('response_format', 'verbose_json');
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;

    const timeout = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      timeout.abort();
    }, this.opts.timeoutMs);
    const signal = callerSignal ? AbortSignal.any([callerSignal, timeout.signal]) : timeout.signal;
    let res: Response;
    let text: string;
    try {
      // The timeout covers the body too: a provider that stalls mid-answer must not hold a worker slot.
      res = await fetch(this.endpoint, { method: 'POST', headers, body: form, signal, redirect: 'manual' });
      text = await res.text();
    } catch (err) {
      if (callerSignal?.aborted) throw callerSignal.reason;
      if (timedOut)
        throw new IngestError('transcription_timeout', `The transcription API did not answer within ${this.opts.timeoutMs} ms.`, {
          cause: err,
        });
      throw new IngestError('transcription_unavailable', 'Could not reach the transcription API.', { cause: err });
    } finally {
      clearTimeout(timer);
    }
    if (res.status >= 300 && res.status < 400)
      throw new IngestError(
        'transcription_rejected',
        `The transcription API redirected (HTTP ${res.status}); point TRANSCRIPTION_URL at the final address.`,
        {
          status: res.status,
        },
      );
    if (!res.ok) throw statusFailure(res.status, text);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new IngestError('transcription_invalid_response', 'The transcription API answered with a body that is not JSON.', {
        status: res.status,
        cause: err,
      });
    }
    const body = json as { text?: unknown; language?: unknown; duration?: unknown };
    if (typeof body !== 'object' || body === null || typeof body.text !== 'string')
      throw new IngestError('transcription_invalid_response', 'The transcription API answer has no `text`.', { status: res.status });
    const duration = typeof body.duration === 'number' && Number.isFinite(body.duration) && body.duration >= 0 ? body.duration : undefined;
    return {
      text: body.text,
      language: normalizeLanguage(body.language),
      ...(duration !== undefined ? { durationSeconds: Math.round(duration * 100) / 100 } : {}),
      costCents: transcriptionCostCents(duration, body.text, this.opts.pricePerMinute),
    };
  }
}

/**
 * The transcriber of this process. TRANSCRIPTION_URL is required in production; `npm start` and
 * the tests point it at the local simulator (sim/transcription) when it is unset.
 */
export function createTranscriber(): Transcriber {
  const url = config.transcription.url;
  if (!url) {
    return {
      async transcribe() {
        throw new IngestError('transcription_unavailable', 'No transcription API is configured (TRANSCRIPTION_URL).', { retryable: false });
      },
    };
  }
  return new HttpTranscriber({
    baseUrl: url,
    apiKey: config.transcription.apiKey,
    model: config.transcription.model,
    timeoutMs: config.transcription.timeoutMs,
    pricePerMinute: config.transcription.pricePerMinute,
  });
}
