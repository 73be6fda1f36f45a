// Failures of ingest (sources, docs/sources.md "Errors"; knowledge documents, docs/knowledge.md):
// the source cannot be read into text, or the text cannot be stored. The job row exposes
// `errorCode` to API clients, so it depends on what went wrong, never on prose. Each of these is
// about the source itself, which another attempt would read the same way, so none is retried;
// the calls ingest makes to other services fail with their own OutboundErrors (lib/outbound/outbound.ts).

export type IngestErrorCode =
  /** The bytes are of a kind no extractor reads (an image, a zip, an executable...). */
  | 'unsupported_media_type'
  /** The file was read but holds no text (a blank document, silence). */
  | 'empty_document'
  /** The file claims a readable kind but is damaged or encrypted. */
  | 'unreadable_document'
  | 'upload_not_found'
  | 'upload_without_object'
  | 'document_too_large'
  | 'document_not_found';

export class IngestError extends Error {
  readonly retryable = false;
  /** What a paid call made before the failure cost (a recording transcribed to silence), as LlmError's. */
  readonly costCents: number;

  constructor(
    readonly code: IngestErrorCode,
    message: string,
    opts: { cause?: unknown; costCents?: number } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'IngestError';
    this.costCents = opts.costCents ?? 0;
  }
}
