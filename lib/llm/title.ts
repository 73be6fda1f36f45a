// The internal name of a post. Generation and `PATCH /v1/posts/{id}` both name an unnamed post
// "from the opening line" (spec 4.4), so the rule lives here once and both call it.

export const TITLE_MAX_CHARS = 80;

// Characters that render as nothing: a line holding only these is blank to a reader.
const INVISIBLE = /[\s\u200B-\u200D\u2060\uFEFF]/gu;
const TRAILING_JOINERS = /[\s,;:\-–—(\[{/]+$/u;

/**
 * The first non-blank line of `content`, whitespace collapsed, at most 80 characters; longer
 * lines are cut at the last word boundary. Returns '' when there is no visible text.
 */
export function deriveTitle(content: string): string {
  const line = content.split(/\r\n|\r|\n/).find((l) => l.replace(INVISIBLE, '') !== '');
  if (line === undefined) return '';
  const clean = line
    .replace(/[\u200B-\u200D\u2060\uFEFF]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  // Count code points so that an emoji is never split into a lone surrogate.
  const chars = Array.from(clean);
  if (chars.length <= TITLE_MAX_CHARS) return clean;

  // One character past the limit: a word that ends exactly at the limit is still whole.
  const window = chars.slice(0, TITLE_MAX_CHARS + 1).join('');
  const space = window.lastIndexOf(' ');
  if (space > 0) {
    const cut = window.slice(0, space).replace(TRAILING_JOINERS, '');
    if (cut !== '') return cut;
  }
  // A single very long token (a URL, say) has no boundary to respect.
  return chars.slice(0, TITLE_MAX_CHARS).join('').trimEnd();
}
