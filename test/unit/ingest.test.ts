import assert from 'node:assert/strict';
import { ApiError } from '../../lib/errors';
import { IngestError } from '../../lib/ingest/errors';
import { extractText } from '../../lib/ingest/extract';
import { decodeInlineFile, inlineObjectKey, inlineUploadId } from '../../lib/ingest/inlineUpload';
import { guessLanguage } from '../../lib/ingest/language';
import { normalizeLanguage, transcriptionCostCents, type Transcriber } from '../../lib/ingest/transcription';
import { builtinInsights, parseInsights } from '../../lib/llm/insights';
import { LlmError } from '../../lib/llm/errors';
import { previewOf } from '../../lib/sources/sources';
import { simulatedTranscript, wavDurationSeconds } from '../../sim/transcription/server';
import { docxFixture, pdfFixture, pngBytes, wavWithTranscript } from '../sources/files';

// Pure rules of ingest (docs/sources.md): sniffing before trusting the declared type, the
// inline file decoder, the built-in topics and hooks, the language guess and the preview.

const never: Transcriber = {
  async transcribe() {
    throw new Error('not a recording');
  },
};

async function failsWith(p: Promise<unknown>, code: string) {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof IngestError, String(e));
    assert.equal(e.code, code);
    return true;
  });
}

describe('ingest: extraction', () => {
  it('reads PDF and DOCX whatever the declared type, and text only when it is text', async () => {
    const pdf = await extractText({ bytes: pdfFixture(), mimeType: 'text/plain', filename: 'x.txt' }, { transcriber: never });
    assert.match(pdf.text, /shipping weekly beats shipping monthly/);
    const docx = await extractText({ bytes: docxFixture(), mimeType: 'application/pdf', filename: 'x.pdf' }, { transcriber: never });
    assert.match(docx.text, /^Hiring slowly/);
    await failsWith(
      extractText({ bytes: pngBytes(), mimeType: 'text/plain', filename: 'x.txt' }, { transcriber: never }),
      'unsupported_media_type',
    );
    // Bytes without a signature are text only if declared so and valid UTF-8 without NUL.
    await failsWith(
      extractText(
        { bytes: Buffer.from('plain words here'), mimeType: 'application/octet-stream', filename: 'x.bin' },
        { transcriber: never },
      ),
      'unsupported_media_type',
    );
    await failsWith(
      extractText({ bytes: Buffer.from([0x66, 0xff, 0xfe, 0x66]), mimeType: 'text/plain', filename: 'x.txt' }, { transcriber: never }),
      'unsupported_media_type',
    );
    const md = await extractText(
      { bytes: Buffer.from('# Title\n\n\n\n\nBody'), mimeType: 'application/octet-stream', filename: 'x.md' },
      { transcriber: never },
    );
    assert.equal(md.text, '# Title\n\nBody');
    await failsWith(
      extractText({ bytes: Buffer.from(' \n\t \n'), mimeType: 'text/plain', filename: 'x.txt' }, { transcriber: never }),
      'empty_document',
    );
  });

  it('sends recordings to the transcriber with the sniffed type', async () => {
    const seen: string[] = [];
    const t: Transcriber = {
      async transcribe(input) {
        seen.push(input.mimeType);
        return { text: 'Heard it.', language: 'de', durationSeconds: 4, costCents: 2 };
      },
    };
    const out = await extractText(
      { bytes: wavWithTranscript('x'), mimeType: 'application/octet-stream', filename: 'a.bin' },
      { transcriber: t },
    );
    assert.deepEqual(out, { text: 'Heard it.', language: 'de', durationSeconds: 4, costCents: 2 });
    assert.match(seen[0]!, /^audio\//);
  });

  it('prices a transcription by its minutes, rounded up to whole cents, never zero (docs/sources.md "Spend")', async () => {
    // 60 hundredths of a cent a minute (whisper-1's $0.006).
    assert.equal(transcriptionCostCents(1, 'x', 60), 1);
    assert.equal(transcriptionCostCents(600, 'x', 60), 6);
    assert.equal(transcriptionCostCents(601, 'x', 60), 7);
    // Without a duration, the transcript's length stands in (about 900 characters a minute).
    assert.equal(transcriptionCostCents(undefined, 'x'.repeat(9_000), 60), 6);
    assert.equal(transcriptionCostCents(undefined, '', 60), 1);
    // Silence still cost the call: the refusal carries it, so the job is charged.
    const silent: Transcriber = {
      async transcribe() {
        return { text: ' ', language: null, durationSeconds: 600, costCents: 6 };
      },
    };
    await assert.rejects(
      extractText({ bytes: wavWithTranscript('x'), mimeType: 'audio/wav', filename: 'a.wav' }, { transcriber: silent }),
      (e: unknown) => {
        assert.ok(e instanceof IngestError);
        assert.equal(e.code, 'empty_document');
        assert.equal(e.costCents, 6);
        return true;
      },
    );
  });

  it('the transcription simulator hears the embedded marker and reads the WAV duration', () => {
    const wav = wavWithTranscript('LANG:nl;Goedemorgen allemaal.', 5);
    assert.deepEqual(simulatedTranscript(wav), { text: 'Goedemorgen allemaal.', language: 'nl' });
    assert.equal(wavDurationSeconds(wav), 5);
    const other = simulatedTranscript(Buffer.from('no marker in these bytes'));
    assert.deepEqual(simulatedTranscript(Buffer.from('no marker in these bytes')), other, 'deterministic');
    assert.equal(normalizeLanguage('english'), 'en');
    assert.equal(normalizeLanguage('pt-BR'), 'pt');
    assert.equal(normalizeLanguage('klingon'), null);
  });
});

describe('ingest: inline files (spec 4.9)', () => {
  it('decodes canonical base64 only, refuses data: URLs, and bounds the size before decoding', () => {
    assert.equal(decodeInlineFile('aGVsbG8=').toString(), 'hello');
    for (const bad of ['data:text/plain;base64,aGVsbG8=', 'aGVsbG8', 'aGVs bG8=', 'aGVsbG8-', '']) {
      assert.throws(
        () => decodeInlineFile(bad),
        (e: unknown) => e instanceof ApiError && e.code === 'invalid_request',
        bad,
      );
    }
    assert.throws(
      () => decodeInlineFile('aGVsbG8=', 4),
      (e: unknown) => e instanceof ApiError && e.code === 'payload_too_large' && e.status === 413,
    );
  });

  it('derives the handle and key from the workspace, purpose and SHA-256', () => {
    const sha = 'a'.repeat(64);
    assert.equal(inlineUploadId('org_a', 'source', sha), inlineUploadId('org_a', 'source', sha));
    assert.notEqual(inlineUploadId('org_a', 'source', sha), inlineUploadId('org_b', 'source', sha));
    assert.notEqual(inlineUploadId('org_a', 'source', sha), inlineUploadId('org_a', 'knowledge', sha));
    assert.match(inlineUploadId('org_a', 'source', sha), /^upl_[0-9A-Za-z]{24}$/);
    assert.equal(inlineObjectKey('org_a', 'source', sha), `org_a/uploads/inline/source/${sha}`);
  });
});

describe('ingest: topics, hooks, language, preview', () => {
  it('the built-in extractor is deterministic and finds what the text returns to', () => {
    const text =
      'Pricing is a product decision. We changed our pricing twice this year. ' +
      'What did customers think of the new pricing? Most customers stayed, and 12 upgraded.';
    const a = builtinInsights(text);
    assert.deepEqual(builtinInsights(text), a);
    assert.equal(a.topics[0], 'pricing');
    assert.ok(a.topics.includes('customers'));
    assert.ok(a.hooks.includes('What did customers think of the new pricing?'));
    assert.ok(a.hooks.length <= 5 && a.topics.length <= 8);
    // A sentence repeated is one hook.
    const repeated = builtinInsights('We ship weekly and we ship well. '.repeat(10));
    assert.deepEqual(repeated.hooks, ['We ship weekly and we ship well.']);
  });

  it('parses a model answer, fenced or bare, and refuses one without JSON', () => {
    assert.deepEqual(parseInsights('```json\n{"topics":["a"],"hooks":["b"]}\n```'), { topics: ['a'], hooks: ['b'] });
    assert.throws(
      () => parseInsights('Here are your topics: a, b'),
      (e: unknown) => e instanceof LlmError && e.code === 'llm_invalid_response',
    );
    assert.throws(
      () => parseInsights('{"topics":[],"hooks":[]}'),
      (e: unknown) => e instanceof LlmError && e.code === 'llm_empty_output',
    );
  });

  it('guesses the language from function words, or says nothing', () => {
    assert.equal(guessLanguage('The team and the product are in a good place for the launch of the year.'), 'en');
    assert.equal(guessLanguage('Le produit est prêt et les équipes sont dans une bonne position pour le lancement.'), 'fr');
    assert.equal(guessLanguage('Die Mannschaft ist bereit und das Produkt ist nicht mehr weit von dem Start.'), 'de');
    assert.equal(guessLanguage('ok'), null);
  });

  it('the preview is at most 2,000 characters and never splits a surrogate pair', () => {
    assert.deepEqual(previewOf('short'), { preview: 'short', previewTruncated: false });
    const emoji = `${'x'.repeat(1999)}😀tail`;
    const p = previewOf(emoji);
    assert.equal(p.previewTruncated, true);
    assert.equal(p.preview, 'x'.repeat(1999));
    assert.equal(previewOf('y'.repeat(2001)).preview.length, 2000);
  });
});
