import { readFileSync } from 'node:fs';
import path from 'node:path';

// Files for the source tests: the tiny PDF and DOCX fixtures, and PCM WAV recordings made here.

const fixtures = path.resolve(import.meta.dirname, '..', 'fixtures');
export const pdfFixture = () => readFileSync(path.join(fixtures, 'source.pdf'));
export const docxFixture = () => readFileSync(path.join(fixtures, 'source.docx'));

/**
 * A mono 16-bit 8 kHz WAV of `seconds` of silence with a `note` chunk carrying
 * `TRANSCRIPT:<text>`: what the transcription simulator (sim/transcription) "hears".
 */
export function wavWithTranscript(text: string, seconds = 2): Buffer {
  const sampleRate = 8000;
  const data = Buffer.alloc(sampleRate * 2 * seconds);
  let note = Buffer.from(`TRANSCRIPT:${text}\0`, 'utf8');
  if (note.length % 2) note = Buffer.concat([note, Buffer.alloc(1)]);
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'ascii');
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(1, 8); // PCM
  fmt.writeUInt16LE(1, 10); // mono
  fmt.writeUInt32LE(sampleRate, 12);
  fmt.writeUInt32LE(sampleRate * 2, 16); // byte rate
  fmt.writeUInt16LE(2, 20);
  fmt.writeUInt16LE(16, 22);
  const noteHeader = Buffer.alloc(8);
  noteHeader.write('note', 0, 'ascii');
  noteHeader.writeUInt32LE(note.length, 4);
  const dataHeader = Buffer.alloc(8);
  dataHeader.write('data', 0, 'ascii');
  dataHeader.writeUInt32LE(data.length, 4);
  const body = Buffer.concat([Buffer.from('WAVE', 'ascii'), fmt, noteHeader, note, dataHeader, data]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF', 0, 'ascii');
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}

/** A 1×1 PNG: a kind no source extractor reads. */
export const pngBytes = () =>
  Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
