import { createHash } from 'node:crypto';
import { png } from '../../tooling/png';

// Real image bytes for the media tests (tooling/png.ts makes them).

export { png };

/** A PNG of about `bytes` bytes (square-ish, random pixels). */
export function pngOfSize(bytes: number): Buffer {
  const side = Math.max(1, Math.floor(Math.sqrt(bytes / 3)));
  return png(side, side);
}

export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
