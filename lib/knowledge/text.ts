import { createHash } from 'node:crypto';

// Pure text steps of ingest (docs/knowledge.md): normalise, hash, preview, chunk.

/** spec 8: Knowledge `textPreview` is at most 2,000 characters. */
export const PREVIEW_CHARS = 2_000;

/** Line ends unified, control characters and runs of blank lines dropped, ends trimmed. */
export function normalizeText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, ' ')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export function contentHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** At most `max` characters, never splitting a surrogate pair: valid UTF-16 (and UTF-8 on the wire). */
export function previewOf(text: string, max = PREVIEW_CHARS): { preview: string; previewTruncated: boolean } {
  if (text.length <= max) return { preview: text, previewTruncated: false };
  const code = text.charCodeAt(max - 1);
  return { preview: text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max), previewTruncated: true };
}

/**
 * Passages of about `size` characters: paragraphs are packed together while they fit; a longer
 * paragraph is cut at sentence ends, and a sentence longer than `size` at a space.
 */
export function chunkText(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (const para of text.split(/\n\s*\n/)) {
    const p = para.replace(/\s+/g, ' ').trim();
    if (!p) continue;
    if (p.length <= size) {
      pieces.push(p);
      continue;
    }
    for (const sentence of p.split(/(?<=[.!?…。！？])\s+/u)) {
      let rest = sentence;
      while (rest.length > size) {
        let cut = rest.lastIndexOf(' ', size);
        if (cut < size / 2) cut = size;
        pieces.push(rest.slice(0, cut).trim());
        rest = rest.slice(cut).trim();
      }
      if (rest) pieces.push(rest);
    }
  }
  const chunks: string[] = [];
  let current = '';
  for (const piece of pieces) {
    if (current && current.length + 1 + piece.length > size) {
      chunks.push(current);
      current = piece;
    } else current = current ? `${current}\n${piece}` : piece;
  }
  if (current) chunks.push(current);
  return chunks;
}
