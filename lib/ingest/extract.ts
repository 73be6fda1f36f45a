import { fileTypeFromBuffer } from 'file-type';
import { IngestError } from './errors';
import { guessLanguage } from './language';
import type { Transcriber } from './transcription';

// Text out of an uploaded file, for sources and knowledge documents (docs/sources.md
// "Extraction"). The kind is sniffed from the bytes (file-type); the declared type and the file
// name only decide between kinds that have no signature (plain text and Markdown). Text and
// Markdown are read as UTF-8, PDF with unpdf, DOCX with mammoth, audio and video go through the
// transcriber. Anything else is `unsupported_media_type`; no text at all is `empty_document`.

export interface ExtractInput {
  bytes: Uint8Array;
  mimeType: string;
  filename: string;
}

export interface Extracted {
  text: string;
  language: string | null;
  durationSeconds?: number;
  /** What the transcription cost, in cents; 0 for a document read here. */
  costCents: number;
}

export type FileKind = 'text' | 'pdf' | 'docx' | 'audio' | 'video';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const TEXT_EXTENSIONS = /\.(txt|text|md|markdown|mdown|csv|srt|vtt)$/i;

function declaredTextual(mimeType: string, filename: string): boolean {
  const t = mimeType.split(';')[0]!.trim().toLowerCase();
  return t.startsWith('text/') || t === 'application/markdown' || TEXT_EXTENSIONS.test(filename);
}

/** What the bytes are, whatever the caller declared; null when nothing here can read them. */
export async function sniffKind(input: ExtractInput): Promise<{ kind: FileKind; mime: string } | null> {
  const sniffed = await fileTypeFromBuffer(input.bytes);
  if (sniffed) {
    if (sniffed.mime === 'application/pdf') return { kind: 'pdf', mime: sniffed.mime };
    if (sniffed.mime === DOCX) return { kind: 'docx', mime: sniffed.mime };
    if (sniffed.mime.startsWith('audio/')) return { kind: 'audio', mime: sniffed.mime };
    if (sniffed.mime.startsWith('video/')) return { kind: 'video', mime: sniffed.mime };
    // Containers that carry either (mp4/webm/ogg are sniffed as video or audio already); the rest
    // (images, archives, executables, other office formats) have no extractor here.
    return null;
  }
  // No signature: only text has none. A text file must be valid UTF-8 and hold no NUL byte.
  if (!declaredTextual(input.mimeType, input.filename)) return null;
  if (input.bytes.includes(0)) return null;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(input.bytes);
  } catch {
    return null;
  }
  return { kind: 'text', mime: input.mimeType.split(';')[0]!.trim().toLowerCase() || 'text/plain' };
}

function tidy(text: string): string {
  return text
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, ' ')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

async function pdfText(bytes: Uint8Array): Promise<string> {
  const { extractText, getDocumentProxy } = await import('unpdf');
  try {
    // unpdf may transfer the buffer to its worker: give it a copy.
    const pdf = await getDocumentProxy(new Uint8Array(bytes));
    const { text } = await extractText(pdf, { mergePages: true });
    return text;
  } catch (err) {
    throw new IngestError('unreadable_document', 'The PDF could not be read (damaged or encrypted).', { cause: err });
  }
}

async function docxText(bytes: Uint8Array): Promise<string> {
  const mammoth = (await import('mammoth')).default;
  try {
    const { value } = await mammoth.extractRawText({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) });
    return value;
  } catch (err) {
    throw new IngestError('unreadable_document', 'The DOCX document could not be read.', { cause: err });
  }
}

export async function extractText(input: ExtractInput, deps: { transcriber: Transcriber }): Promise<Extracted> {
  const found = await sniffKind(input);
  if (!found) {
    throw new IngestError(
      'unsupported_media_type',
      `The file ${input.filename} (declared ${input.mimeType}) is not a kind that can be read: text, Markdown, PDF, DOCX, audio or video.`,
    );
  }
  let text: string;
  let language: string | null = null;
  let durationSeconds: number | undefined;
  let costCents = 0;
  switch (found.kind) {
    case 'text':
      text = new TextDecoder('utf-8').decode(input.bytes);
      break;
    case 'pdf':
      text = await pdfText(input.bytes);
      break;
    case 'docx':
      text = await docxText(input.bytes);
      break;
    case 'audio':
    case 'video': {
      const t = await deps.transcriber.transcribe({ bytes: input.bytes, mimeType: found.mime, filename: input.filename });
      text = t.text;
      language = t.language;
      durationSeconds = t.durationSeconds;
      costCents = t.costCents;
      break;
    }
  }
  text = tidy(text);
  if (!/[\p{L}\p{N}]/u.test(text)) {
    throw new IngestError(
      'empty_document',
      found.kind === 'audio' || found.kind === 'video' ? 'No speech was found in the recording.' : 'The document holds no text.',
      { costCents },
    );
  }
  return { text, language: language ?? guessLanguage(text), ...(durationSeconds !== undefined ? { durationSeconds } : {}), costCents };
}
