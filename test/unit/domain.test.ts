import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalizeDomain } from '../../src/core/model';

describe('task domain from a manifest name', () => {
  it('a word of the name decides, wherever it stands; other names are other, none is unknown', () => {
    const cases: [string | null, string | null][] = [
      ['swe', 'swe'], ['toy-swe', 'swe'], ['SWE-bench', 'swe'], ['software engineering', 'swe'],
      ['coding', 'code'], ['competitive_code', 'code'],
      ['toy-math', 'math'], ['gsm8k', 'math'], ['Mathematics', 'math'],
      ['open-qa', 'qa'], ['trivia', 'qa'],
      ['wordle', 'other'], ['swedish-poetry', 'other'], ['mathematician-bios', 'other'],
      ['', null], [null, null],
    ];
    for (const [name, want] of cases) assert.equal(normalizeDomain(name), want, String(name));
  });
});
