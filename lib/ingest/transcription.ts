import { config } from '../config';
import { HttpTransport, noAnswer, OutboundError, parseJson, statusVerdict, type TransportErrors } from '../outbound/outbound';

// Audio and video transcription (docs/sources.md "Transcription"): a client of an
// OpenAI-compatible `POST {base}/audio/transcriptions` (multipart: file, model,
// response_format=verbose_json). One provider call per `transcribe`; retries belong to the caller
// (the ingest activity under Temporal's retry policy), so every failure is a TranscriptionError
// carrying `retryable`, decided from the HTTP status, never from the provider's prose.

export type TranscriptionErrorCode =
  | 'transcription_unavailable'
  | 'transcription_timeout'
  | 'transcription_rate_limited'
  | 'transcription_auth_failed'
  | 'transcription_rejected'
  | 'transcription_invalid_response';

export class TranscriptionError extends OutboundError {
  readonly service = 'transcription';
  declare readonly code: TranscriptionErrorCode;
}

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

const TRANSCRIPTION_ERRORS: TransportErrors = {
  ...noAnswer(TranscriptionError, 'transcription API', { timeout: 'transcription_timeout', unreachable: 'transcription_unavailable' }),
  status: ({ status, text }) => {
    const verdict = statusVerdict(status);
    const failure = (code: TranscriptionErrorCode, message: string) => new TranscriptionError(code, message, verdict);
    if (status < 400)
      return failure(
        'transcription_rejected',
        `The transcription API redirected (HTTP ${status}); point TRANSCRIPTION_URL at the final address.`,
      );
    if (status === 401 || status === 403)
      return failure('transcription_auth_failed', `The transcription API refused the credential (HTTP ${status}).`);
    if (status === 429) return failure('transcription_rate_limited', 'The transcription API is rate limiting this service.');
    if (status === 408) return failure('transcription_timeout', 'The transcription API timed out.');
    if (status >= 500) return failure('transcription_unavailable', `The transcription API failed (HTTP ${status}).`);
    // 400, 413, 415, 422: the file or the request; another try sends the same thing.
    return failure('transcription_rejected', `The transcription API rejected the file (HTTP ${status}): ${text.slice(0, 300)}`);
  },
};

export class HttpTranscriber implements Transcriber {
  private readonly transport: HttpTransport;

  constructor(private readonly opts: HttpTranscriberOptions) {
    this.transport = new HttpTransport('TRANSCRIPTION_URL', opts);
  }

  async transcribe(input: TranscribeInput, { signal }: { signal?: AbortSignal } = {}): Promise<Transcript> {
    signal?.throwIfAborted();
    const form = new FormData();
    form.set('file', new Blob([input.bytes], { type: input.mimeType }), input.filename);
    form.set('model', this.opts.model);
    form.set('response_format', 'verbose_json');
    const { status, text } = await this.transport.send(
      { method: 'POST', path: 'audio/transcriptions', body: form, signal },
      TRANSCRIPTION_ERRORS,
    );
    const body = parseJson(text) as { text?: unknown; language?: unknown; duration?: unknown } | null | undefined;
    if (typeof body !== 'object' || body === null || typeof body.text !== 'string')
      throw new TranscriptionError('transcription_invalid_response', 'The transcription API answer is not JSON with a `text`.', {
        failure: 'bad_response',
        retryable: true,
        status,
      });
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
        throw new TranscriptionError('transcription_unavailable', 'No transcription API is configured (TRANSCRIPTION_URL).', {
          failure: 'unavailable',
          retryable: false,
        });
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
