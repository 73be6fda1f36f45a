// Inline files arrive as base64 in JSON (spec 4.7 images, 4.9 / 4.12 files over MCP). One strict
// reading for all of them: standard alphabet, padded, nothing else.

/** Bytes a base64 text decodes to, from its length alone: an oversized body is refused before it is allocated. */
export function base64DecodedLength(b64: string): number {
  const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return Math.floor((b64.length * 3) / 4) - pad;
}

/**
 * The bytes of padded standard base64, or null when the text is not that. Node's decoder skips
 * characters outside the alphabet (whitespace, `=` inside, anything else), so fewer bytes come
 * out than the length promises; it also reads base64url's `-` and `_`, refused by name. Both
 * checks cost microseconds on megabytes, where a regular expression or a round trip through the
 * encoder costs milliseconds.
 */
export function decodeStrictBase64(b64: string): Buffer | null {
  if (b64.length === 0 || b64.length % 4 !== 0) return null;
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.length !== base64DecodedLength(b64) || b64.includes('-') || b64.includes('_')) return null;
  return bytes;
}
