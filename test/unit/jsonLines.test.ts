import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { DuplicateKeyScan, readJsonLines, writtenAsJs, type JsonLine } from '../../src/core/store/importers/jsonLines';
import { tempDir } from '../helpers/tmp';

async function all(file: string, from = 0, line = 1, maxLineBytes?: number): Promise<JsonLine[]> {
  const out: JsonLine[] = [];
  for await (const l of readJsonLines(file, from, line, undefined, maxLineBytes)) out.push(l);
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

  it('ends lines at LF, CRLF or a lone CR (old Mac files), also when a CRLF straddles two reads', async () => {
    const dir = tempDir();
    const f = path.join(dir, 'cr.jsonl');
    writeFileSync(f, '{"a":1}\r{"a":2}\r\n{"a":3}\n{"a":4}\r');
    const lines = await all(f);
    assert.deepEqual(lines.map((l) => [l.line, l.value]), [[1, { a: 1 }], [2, { a: 2 }], [3, { a: 3 }], [4, { a: 4 }]]);
    assert.equal(lines[3]!.endOffset, Buffer.byteLength('{"a":1}\r{"a":2}\r\n{"a":3}\n{"a":4}\r'));
    // The reader takes 1 MiB at a time: put the CR last in the first read and its LF first in the next.
    const g = path.join(dir, 'straddle.jsonl');
    const first = JSON.stringify({ pad: 'x'.repeat((1 << 20) - 11) });
    assert.equal(Buffer.byteLength(first) + 1, 1 << 20);
    writeFileSync(g, `${first}\r\n{"a":2}\r\n`);
    const split = await all(g);
    assert.deepEqual(split.map((l) => l.line), [1, 2], 'the LF after the CR is not a blank line of its own');
    assert.deepEqual(split[1]!.value, { a: 2 });
    assert.equal(split.every((l) => l.error === undefined), true);
  });

  it('drops a UTF-8 byte-order mark before the first line only', async () => {
    const dir = tempDir();
    const f = path.join(dir, 'bom.jsonl');
    writeFileSync(f, '\uFEFF{"a":1}\n\uFEFF{"a":2}\n');
    const lines = await all(f);
    assert.deepEqual(lines[0]!.value, { a: 1 });
    assert.match(lines[1]!.error!, /JSON/, 'a mark inside the file is still a malformed line');
  });

  it('reports a line over the size limit as a bad line without holding it, and reads on', async () => {
    const dir = tempDir();
    const f = path.join(dir, 'long.jsonl');
    writeFileSync(f, `{"a":1}\n${JSON.stringify({ big: 'y'.repeat(5000) })}\n{"a":3}\n${'z'.repeat(9000)}`);
    const lines = await all(f, 0, 1, 4096);
    assert.deepEqual(lines.map((l) => l.line), [1, 2, 3, 4]);
    assert.match(lines[1]!.error!, /the line is 0\.005 MiB long, over the 0\.004 MiB a line may hold; it was not read \(split the record, or drop it with --on-error skip\)/);
    assert.equal(lines[1]!.raw, '');
    assert.deepEqual(lines[2]!.value, { a: 3 }, 'the next line reads as usual');
    assert.match(lines[3]!.error!, /over the 0\.004 MiB/, 'an over-long last line without a newline is reported too');
  });

  it('finds a record that names a top-level key twice, however the bytes are split, and nothing else', () => {
    const scan = (text: string, step: number) => {
      const s = new DuplicateKeyScan();
      const bytes = Buffer.from(text);
      for (let i = 0; i < bytes.length && !s.found; i += step) s.feed(bytes.subarray(i, i + step));
      return s.found;
    };
    const twice = ['{"a": 1, "b": 2, "a": 3}\n', '{"x": 1}\n{"k\\"q": 1, "k\\"q": 2}\n', '{"a\\\\": 1, "a\\\\": 2}\n', '{"é": [1, {"é": 2}], "é": 3}\n'];
    const once = [
      '{"a": 1}\n{"a": 2}\n', // one per record
      '{"a": {"b": 1, "b": 2}, "c": [{"d": 1}, {"d": 2}]}\n', // nested keys are the value's business
      '{"a": "\\"b\\": 1, \\"b\\": 2", "b": "a"}\n', // keys inside a string
      '{"a\\\\": 1, "a": 2}\n', // an escaped backslash ends the name
      '{"a": 1, "b"\r{"a": 2}\n', // a broken line does not leak into the next
      '["a", "a"]\n',
    ];
    for (const step of [1, 2, 3, 7, 1 << 20]) {
      for (const t of twice) assert.equal(scan(t, step), true, `${JSON.stringify(t)} in ${step}-byte reads`);
      for (const t of once) assert.equal(scan(t, step), false, `${JSON.stringify(t)} in ${step}-byte reads`);
    }
  });

  it("checks a bulk plan's shape: the keys in order, flat single-turn messages, numbers JavaScript writes the same, however the bytes are split", () => {
    const check = { keys: ['p', 'c', 'x'], messages: ['p', 'c'], singleTurn: 'c', jsonText: ['x'] };
    const scan = (text: string, step: number) => {
      const s = new DuplicateKeyScan(check);
      const bytes = Buffer.from(text);
      for (let i = 0; i < bytes.length && !s.found; i += step) s.feed(bytes.subarray(i, i + step));
      return s.found;
    };
    const line = (p: string, c: string, x: string) => `{"p": ${p}, "c": ${c}, "x": ${x}}\n`;
    const sys = '{"role": "system", "content": "s\\n \\"q\\" 1, 2"}';
    const fine = [
      line(`[${sys}, {"role": "user", "content": "u", "name": null}]`, '[{"role": "assistant", "content": "a", "tool_calls": null}]', '{"t": 812.0, "u": 0.125, "n": [1, -2, 1767225601.2345679], "s": "1.50"}'),
      line('"text"', '"text"', '3'),
      line('[]', 'null', 'null'),
      // One key in sibling objects, and in an object and the one inside it.
      line('"p"', '"c"', '{"a": [{"b": 1}, {"b": 2}], "c": {"b": 1, "c": {"b": 2}}, "b": 3}'),
      // Escapes outside the message lists, and in them ones DuckDB writes as JavaScript does (\u0007, and \u00e9 as the letter).
      line(`[{"role": "user", "content": "caf\\u00e9 \\u0007"}]`, '"c \\u001b"', '"x \\u001b"'),
      line(`[${sys}, {"role": "assistant", "content": "shot"}, {"role": "user", "content": "q"}]`, '[{"role": "user", "content": "more"}, {"role": "assistant", "content": "x"}]', '{}'),
    ];
    const differ = {
      'a key missing': '{"p": "a", "c": "b"}\n',
      'a key more': '{"p": "a", "c": "b", "x": 1, "y": 2}\n',
      'keys in another order': '{"c": "b", "p": "a", "x": 1}\n',
      'a key twice': '{"p": "a", "p": "b", "x": 1}\n',
      'a key escaped where the plan has it plain': '{"p": "a", "c": "b", "\\u0078": 1}\n',
      'a number in a message': line(`[{"role": "user", "content": "u", "n": 1}]`, '"c"', '1'),
      'a role that is not text': line(`[{"role": 1, "content": "u"}]`, '"c"', '1'),
      'no role': line(`[{"content": "u"}]`, '"c"', '1'),
      'a list in a message': line(`[{"role": "user", "content": ["u"]}]`, '"c"', '1'),
      'a message that is text': line(`["u"]`, '"c"', '1'),
      'a key twice in a message': line(`[{"role": "user", "role": "user"}]`, '"c"', '1'),
      'a whole-number key': line(`[{"role": "user", "0": "u"}]`, '"c"', '1'),
      'an escaped control character': line(`[{"role": "user", "content": "a\\u001b[31m"}]`, '"c"', '1'),
      'an escaped control character in a later message, after an escaped quote': line(`[${sys}, {"role": "user", "content": "u \\" \\u001F"}]`, '"c"', '1'),
      'an escaped control character in the second list': line('[{"role": "user", "content": "\\u00e9"}]', '[{"role": "assistant", "content": "\\u000b"}]', '1'),
      'two assistant turns': line('"p"', '[{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}]', '1'),
      'a tool message': line('"p"', '[{"role": "tool", "content": "out"}]', '1'),
      'an exponent': line('"p"', '"c"', '{"lr": 1e-07}'),
      'a trailing zero': line('"p"', '"c"', '[1.50]'),
      'a negative zero': line('"p"', '"c"', '-0.0'),
      'a key twice inside a value kept as JSON text': line('"p"', '"c"', '{"t": 1, "t": 2}'),
      'a key twice deeper inside it': line('"p"', '"c"', '{"a": [{"b": 1, "b": 2}]}'),
    };
    for (const step of [1, 3, 7, 1 << 20]) {
      for (const t of fine) assert.equal(scan(t, step), false, `${JSON.stringify(t)} in ${step}-byte reads`);
      for (const [what, t] of Object.entries(differ)) assert.equal(scan(`${fine[0]}${t}`, step), true, `${what} in ${step}-byte reads`);
    }
  });

  it("finds a plan's marker text in one key's string value only, however the bytes are split", () => {
    const check = { keys: ['input', 'output'], markers: { key: 'output', texts: ['<|im_', '\\nuser\\n<tool_response>'] } };
    const scan = (text: string, step: number) => {
      const s = new DuplicateKeyScan(check);
      const bytes = Buffer.from(text);
      for (let i = 0; i < bytes.length && !s.found; i += step) s.feed(bytes.subarray(i, i + step));
      return s.found;
    };
    const line = (input: unknown, output: unknown) => `${JSON.stringify({ input, output })}\n`;
    const answer = line('<|im_start|>user\nQ "quoted" \\ <|im_end|>\n<|im_start|>assistant\n', 'A "quoted" answer \\ with \n lines');
    const marked = {
      'a template marker': line('q', 'call\n<|im_end|>\n<|im_start|>user\nout'),
      'a marker after an escaped quote': line('q', 'say "x" <|im_end|>'),
      'a plain tool round': line('q', '</tool_call>\nuser\n<tool_response>\nok'),
    };
    for (const step of [1, 2, 5, 1 << 20]) {
      assert.equal(scan(answer.repeat(3), step), false, `markers in the input only, ${step}-byte reads`);
      assert.equal(scan(line('q', { nested: '<|im_start|>' }), step), false, `not the key's string value, ${step}-byte reads`);
      for (const [what, t] of Object.entries(marked)) assert.equal(scan(answer + t + answer, step), true, `${what}, ${step}-byte reads`);
    }
  });

  it('decides whether JavaScript writes a number as it is from its digits as converting it does, over 300,000 numbers of every form', () => {
    // What the check means: the number, a `.0` fraction dropped, is what String(Number(...)) writes.
    const converted = (text: string) => {
      const t = /^-?[0-9]+\.0+$/.test(text) ? text.replace(/\.0+$/, '') : text;
      return t !== '-0' && String(Number(t)) === t;
    };
    let seed = 7;
    const rnd = (m: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % m;
    };
    const digits = (k: number) => Array.from({ length: k }, () => String(rnd(10))).join('');
    const samples = ['0', '-0', '0.0', '-0.0', '0.00', '1.0', '-1.50', '007', '0.1', '0.000001', '0.0000001', '0.0000010', '123456789012345', '1234567890123456', '9007199254740993', '0.30000000000000004', '1e21', '1E5', '-5', '5.', '.5', '1767225600.37', '2.5e-7', '100000000000000000000', '1000000000000000000000'];
    for (let i = 0; i < 300_000; i++) {
      const sign = rnd(4) === 0 ? '-' : '';
      const whole = rnd(5) === 0 ? '0' : digits(1 + rnd(18));
      const point = rnd(3) === 0 ? '' : `.${'0'.repeat(rnd(3) === 0 ? rnd(8) : 0)}${digits(rnd(18))}`;
      const exp = rnd(20) === 0 ? `e${rnd(2) ? '-' : ''}${rnd(30)}` : '';
      samples.push(sign + whole + point + exp, String(rnd(1e9) / 10 ** rnd(12)), (rnd(1e6) * 0.1).toFixed(rnd(6)));
    }
    const wrong = samples.filter((t) => writtenAsJs(t) !== converted(t));
    assert.deepEqual(wrong.slice(0, 10), []);
    // Both answers occur, so the comparison decides something.
    assert.ok(samples.some(writtenAsJs) && !samples.every(writtenAsJs));
  });
});
