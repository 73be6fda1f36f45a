import { randomBytes } from 'node:crypto';
import zlib from 'node:zlib';

// Real image bytes for the media tests and the media bench: a valid PNG of the given size. Random
// pixels make every image unique (and incompressible, so `bytes` ≈ width × height × 3).

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body) >>> 0);
  return Buffer.concat([len, body, crc]);
}

export function png(width: number, height: number, opts: { random?: boolean } = {}): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // truecolour RGB
  const row = width * 3 + 1;
  const raw = opts.random === false ? Buffer.alloc(row * height) : randomBytes(row * height);
  for (let y = 0; y < height; y++) raw[y * row] = 0; // filter: none
  const idat = zlib.deflateSync(raw, { level: opts.random === false ? 6 : 0 });
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', idat),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
