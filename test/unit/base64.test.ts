import assert from 'node:assert/strict';
import fc from 'fast-check';
import { base64DecodedLength, decodeStrictBase64 } from '../../lib/base64';

// The one strict base64 reading of inline files (lib/base64.ts), against a regular expression of
// padded standard base64 as the oracle.

const STRICT = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

describe('strict base64 (lib/base64.ts)', () => {
  it('reads back any bytes Node encodes, at the length it promised before decoding', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (raw) => {
        const b64 = Buffer.from(raw).toString('base64');
        if (raw.length === 0) return assert.equal(decodeStrictBase64(b64), null);
        assert.equal(base64DecodedLength(b64), raw.length);
        assert.deepEqual(decodeStrictBase64(b64), Buffer.from(raw));
      }),
    );
  });

  it('accepts a text only when it is padded standard base64', () => {
    const char = fc.constantFrom(...'AQgw+/=-_ !\n.é'.split(''));
    fc.assert(
      fc.property(
        fc.array(char, { maxLength: 24 }).map((cs) => cs.join('')),
        (text) => {
          const bytes = decodeStrictBase64(text);
          assert.equal(bytes !== null, text.length > 0 && STRICT.test(text), JSON.stringify(text));
        },
      ),
      { numRuns: 5_000 },
    );
  });
});
