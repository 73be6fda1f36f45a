import { extractText, type ExtractInput, type Extracted } from '../ingest/extract';
import { createTranscriber, type Transcriber } from '../ingest/transcription';

// The text of a `type: file` knowledge upload: the one extraction of file sources
// (lib/ingest/extract.ts: sniffed type, text and Markdown, PDF, DOCX, audio and video through the
// transcriber). Its failures are IngestErrors and TranscriptionErrors whose `code` becomes the job's errorCode.

let defaultTranscriber: Transcriber | null = null;

export async function fileText(input: ExtractInput, transcriber?: Transcriber): Promise<Extracted> {
  return extractText(input, { transcriber: transcriber ?? (defaultTranscriber ??= createTranscriber()) });
}
