import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { readJsonLines, type JsonLine } from '../../src/core/store/importers/jsonLines';
import { tempDir } from '../helpers/tmp';

async function all(file: string, from = 0, line = 1): Promise<JsonLine[]> {
  const out: JsonLine[] = [];
  for await (const l of readJsonLines(file, from, line)) out.push(l);
  return out;
}

describe('JSONL reader', () => {
  it('reads 10 MB lines, CRLF endings and blank lines, with line numbers and offsets', async () => {
    const dir = tempDir();
    const f = path.join(dir, 'a.jsonl');
    const big = 'x'.repeat(10 * 1024 * 1024);
    writeFileSync(f, `{"a":1}\r\n\n${JSON.stringify({ big })}\n{"a":3}\n`);
    const lines = await all(f);
    assert.deepEqual(lines.map((l) => l.line), [1, 3, 4]);
    assert.equal((lines[1]!.value as { big: string }).big.length, big.length);
    assert.equal(lines[2]!.endOffset, Buffer.byteLength(`{"a":1}\r\n\n${JSON.stringify({ big })}\n{"a":3}\n`));
  });

  it('treats an unfinished last line as not yet, and resumes at its start', async () => {
    const dir = tempDir();
    const f = path.join(dir, 'live.jsonl');
    writeFileSync(f, '{"a":1}\n{"a":2}\n{"a":');
    const first = await all(f);
    assert.deepEqual(first.map((l) => l.value), [{ a: 1 }, { a: 2 }]);
    assert.equal(first.every((l) => l.error === undefined), true);
    appendFileSync(f, '3}\n{"a":4}\n');
    const rest = await all(f, first[1]!.endOffset, 3);
    assert.deepEqual(rest.map((l) => [l.line, l.value]), [[3, { a: 3 }], [4, { a: 4 }]]);
  });

  it('keeps a complete last line without a newline, and reports bad lines', async () => {
    const dir = tempDir();
    const f = path.join(dir, 'b.jsonl');
    writeFileSync(f, '{"a":1}\nnot json\n{"a":2}');
    const lines = await all(f);
    assert.equal(lines.length, 3);
    assert.equal(lines[1]!.line, 2);
    assert.match(lines[1]!.error!, /JSON/);
    assert.equal(lines[1]!.raw, 'not json');
    assert.deepEqual(lines[2]!.value, { a: 2 });
  });

  it("reads Python's bare NaN and Infinity as null, and only outside strings", async () => {
    const dir = tempDir();
    const f = path.join(dir, 'py.jsonl');
    writeFileSync(f, '{"score": NaN, "adv": -Infinity, "text": "NaN stays"}\n');
    const [l] = await all(f);
    assert.deepEqual(l!.value, { score: null, adv: null, text: 'NaN stays' });
  });
});
