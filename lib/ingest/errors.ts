// Failures of file ingest (sources and knowledge documents; docs/sources.md "Errors"). The
// job row exposes `errorCode` to API clients and the activity decides retries from
// `retryable`, so both depend on what went wrong, never on prose.

export type IngestErrorCode =
  /** The bytes are of a kind no extractor reads (an image, a zip, an executable...). */
  | 'unsupported_media_type'
  /** The file was read but holds no text (a blank document, silence). */
  | 'empty_document'
  /** The file claims a readable kind but is damaged or encrypted. */
  | 'unreadable_document'
  | 'transcription_unavailable'
  | 'transcription_timeout'
  | 'transcription_rate_limited'
  | 'transcription_auth_failed'
  | 'transcription_rejected'
  | 'transcription_invalid_response';

const RETRYABLE: Record<IngestErrorCode, boolean> = {
  unsupported_media_type: false,
  empty_document: false,
  unreadable_document: false,
  transcription_unavailable: true,
  transcription_timeout: true,
  transcription_rate_limited: true,
  transcription_auth_failed: false,
  transcription_rejected: false,
  transcription_invalid_response: true,
};

export class IngestError extends Error {
  readonly code: IngestErrorCode;
  readonly retryable: boolean;
  readonly status: number | null;
  /** What a paid call made before the failure cost (a recording transcribed to silence), as LlmError's. */
  readonly costCents: number;

  constructor(
    code: IngestErrorCode,
    message: string,
    opts: { status?: number | null; retryable?: boolean; cause?: unknown; costCents?: number } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'IngestError';
    this.code = code;
    this.status = opts.status ?? null;
    this.retryable = opts.retryable ?? RETRYABLE[code];
    this.costCents = opts.costCents ?? 0;
  }
}
