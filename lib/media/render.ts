import { createHash } from 'node:crypto';
import sharp from 'sharp';

// The built-in image renderer (docs/media.md "Image generation"): without an images API key, an
// image generation job draws a clean quote card, the post's hook or the prompt on the
// project's colours, from SVG through sharp. Deterministic: the same text, project and style give
// the same bytes, so a retried job lands on the same asset (the library dedupes by SHA-256).

export const CARD_WIDTH = 1200;
export const CARD_HEIGHT = 627;

/** Pairs of background / accent colours; a project always gets the same one (its "colours"). */
const PALETTES = [
  ['#0B3D5C', '#F2B134'],
  ['#1F2937', '#34D399'],
  ['#3B0764', '#F472B6'],
  ['#0F4C3A', '#FACC15'],
  ['#7C2D12', '#FDBA74'],
  ['#111827', '#60A5FA'],
  ['#134E4A', '#F0ABFC'],
  ['#312E81', '#A5B4FC'],
] as const;

export function paletteOf(projectId: string): { background: string; accent: string } {
  const n = createHash('sha256').update(projectId).digest().readUInt32BE(0);
  const [background, accent] = PALETTES[n % PALETTES.length]!;
  return { background, accent };
}

function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** Greedy word wrap to at most `maxLines` lines of `width` characters; the last one ends with … when cut. */
export function wrap(text: string, width: number, maxLines: number): string[] {
  const words = text.replace(/\s+/g, ' ').trim().split(' ').filter(Boolean);
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    const w = word.length > width ? `${word.slice(0, width - 1)}…` : word;
    if (line && line.length + 1 + w.length > width) {
      lines.push(line);
      line = w;
      if (lines.length === maxLines) break;
    } else line = line ? `${line} ${w}` : w;
  }
  if (lines.length < maxLines && line) lines.push(line);
  const used = lines.join(' ').replace(/…/g, '').split(' ').length;
  if (used < words.length && lines.length) lines[lines.length - 1] = `${lines[lines.length - 1]!.replace(/[.,;:!?…]*$/, '')}…`;
  return lines;
}

export async function renderQuoteCard(input: { text: string; projectId: string; caption?: string }): Promise<Buffer> {
  const { background, accent } = paletteOf(input.projectId);
  const text = input.text.trim() || 'Share what you learned this week.';
  const fontSize = text.length > 140 ? 40 : text.length > 70 ? 48 : 58;
  // Bold sans glyphs average about 0.62 em; 960 px of line width.
  const lines = wrap(text, Math.floor(960 / (fontSize * 0.62)), 6);
  const lineHeight = Math.round(fontSize * 1.3);
  const top = Math.round((CARD_HEIGHT - lines.length * lineHeight) / 2) + fontSize;
  const tspans = lines
    .map(
      (l, i) =>
        `<text x="120" y="${top + i * lineHeight}" font-size="${fontSize}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-weight="700" fill="#FFFFFF">${escapeXml(l)}</text>`,
    )
    .join('');
  const caption = input.caption
    ? `<text x="120" y="${CARD_HEIGHT - 48}" font-size="24" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" fill="${accent}">${escapeXml(input.caption.slice(0, 80))}</text>`
    : '';
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${CARD_WIDTH}" height="${CARD_HEIGHT}" viewBox="0 0 ${CARD_WIDTH} ${CARD_HEIGHT}">
<rect width="100%" height="100%" fill="${background}"/>
<rect x="72" y="96" width="12" height="${CARD_HEIGHT - 192}" rx="6" fill="${accent}"/>
<text x="1100" y="250" font-size="220" font-family="Georgia, serif" fill="${accent}" fill-opacity="0.25" text-anchor="end">”</text>
${tspans}${caption}
</svg>`;
  // No metadata or timestamps are written, so the bytes depend only on the input.
  return sharp(Buffer.from(svg)).png({ compressionLevel: 9 }).toBuffer();
}
