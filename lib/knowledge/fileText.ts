// The text of a `type: file` knowledge upload. This module is the knowledge base's single door
// to file extraction: it reads plain text and Markdown itself, and at the merge with the sources
// work it forwards every file to lib/ingest/extract.ts `extractText` (PDF, Word, audio and video
// through the transcriber), keeping this signature, so callers do not change.

export interface FileInput {
  bytes: Uint8Array;
  mimeType: string;
  filename: string;
}

export interface ExtractedText {
  text: string;
  language: string | null;
}

/** A file whose kind cannot be read: the ingest job fails with `errorCode` `unsupported_file_type`. */
export class UnsupportedFileError extends Error {
  constructor(readonly mimeType: string) {
    super(`Files of type ${mimeType} cannot be read into the knowledge base yet; send text/plain or text/markdown.`);
  }
}

const TEXT_TYPES = new Set(['text/plain', 'text/markdown', 'text/x-markdown']);

export async function fileText(input: FileInput): Promise<ExtractedText> {
  const type = input.mimeType.split(';')[0]!.trim().toLowerCase();
  if (!TEXT_TYPES.has(type)) throw new UnsupportedFileError(type);
  const text = new TextDecoder('utf-8', { fatal: false }).decode(input.bytes).replace(/^\uFEFF/, '');
  return { text, language: null };
}
