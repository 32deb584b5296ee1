import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { curveReaderFor } from '../../src/core/store/curves';
import { completeLines, MAX_LINE_BYTES } from '../../src/core/store/curves/lines';
import { mlflowReader } from '../../src/core/store/curves/mlflow';
import { EventType, tensorboardReader } from '../../src/core/store/curves/tensorboard';
import { crc32c } from '../../src/core/store/curves/tfrecord';
import type { CurveItem, CurveReader } from '../../src/core/store/curves/types';
import { consoleValue, parseConsoleLine, verlConsoleReader } from '../../src/core/store/curves/verlConsole';
import { verlFileReader } from '../../src/core/store/curves/verlFile';
import { eventRecord, writeMlflowRun } from '../helpers/curves';
import { repoRoot, tempDir } from '../helpers/tmp';

const fixture = path.join(repoRoot, 'test', 'fixtures', 'curves', 'verl-console', 'train.log');

async function readAll(reader: CurveReader, file: string, startOffset = 0, startLine = 1): Promise<CurveItem[]> {
  const out: CurveItem[] = [];
  for await (const item of reader.read(file, { startOffset, startLine })) out.push(item);
  return out;
}
const pointsOf = (items: CurveItem[]) => items.flatMap((i) => ('points' in i ? i.points : []));
const badOf = (items: CurveItem[]) => items.filter((i): i is Extract<CurveItem, { bad: string }> => 'bad' in i);

describe('verl console lines', () => {
  it('reads a step line behind a coloured Ray prefix, with numpy and torch scalar wrappers', () => {
    const p = parseConsoleLine('\u001b[36m(TaskRunner pid=247607)\u001b[0m step:3 - actor/entropy:np.float64(0.4123) - actor/pg_loss:-0.0036 - x/n:np.int64(7) - t:tensor(0.25, device=\'cuda:0\') - g:nan - h:-inf - ok:True');
    assert.deepEqual(p?.step, 3);
    assert.deepEqual(p?.bad, []);
    assert.deepEqual(Object.fromEntries(p!.values), { 'actor/entropy': 0.4123, 'actor/pg_loss': -0.0036, 'x/n': 7, t: 0.25, g: NaN, h: -Infinity, ok: 1 });
  });

  it('finds the step line after a progress bar redrawn with carriage returns, and passes over other lines', () => {
    assert.equal(parseConsoleLine('Training Progress:  12%|█  | 1/8 [00:49<05:43]\r(main_task pid=9, ip=10.0.0.3) step:2 - a:1.5')?.values[0]![1], 1.5);
    assert.equal(parseConsoleLine('(TaskRunner pid=1) epoch 0, step 3'), null);
    assert.equal(parseConsoleLine("(TaskRunner pid=1) (\"Initial validation metrics: {'val-core/x': \""), null);
    assert.equal(parseConsoleLine('(TaskRunner pid=1) my_step:3 - a:1'), null);
  });

  it('names the pairs that are not key:number and keeps the rest', () => {
    const p = parseConsoleLine('(TaskRunner pid=1) step:6 - actor/entropy:0.29 - actor/grad_nor(TaskRunner pid=3001) Traceback (most recent call last):');
    assert.deepEqual(p?.values, [['actor/entropy', 0.29]]);
    assert.equal(p?.bad.length, 1);
    assert.equal(consoleValue('np.float32(1e-06)'), 1e-6);
    assert.equal(consoleValue('0.1.2'), undefined);
    assert.equal(consoleValue('abc'), undefined);
  });

  it('reads the whole fixture log: every step, the repeated step of the resumed run, the broken line reported with its line', async () => {
    const items = await readAll(verlConsoleReader, fixture);
    const pts = pointsOf(items);
    assert.deepEqual([...new Set(pts.map((p) => p.step))], [0, 1, 2, 3, 4, 5, 6, 7, 8]);
    const entropy6 = pts.filter((p) => p.step === 6 && p.metric === 'actor/entropy').map((p) => p.value);
    assert.deepEqual(entropy6, [0.2977, 0.2504], 'both step-6 lines read, in file order (the later one stands in the store)');
    const lines = readFileSync(fixture, 'utf8').split('\n');
    const broken = lines.findIndex((l) => l.includes('actor/grad_nor(')) + 1;
    const bad = badOf(items);
    assert.equal(bad.length, 1);
    assert.equal(bad[0]!.at.line, broken);
    assert.match(bad[0]!.bad, /^step 6: not key:number: "actor\/grad_nor\(TaskRunner pid=3001\) Traceback/);
    assert.ok(Number.isNaN(pts.find((p) => p.step === 7 && p.metric === 'actor/grad_norm')!.value));
    assert.equal(pts.find((p) => p.step === 8 && p.metric === 'actor/grad_norm')!.value, Infinity);
    assert.equal(curveReaderFor(fixture), verlConsoleReader);
  });

  it('leaves a last line without its newline for the next read, and reads on from an offset', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'live.log');
    writeFileSync(file, '(TaskRunner pid=1) step:1 - a:0.5\n(TaskRunner pid=1) step:2 - a:0.');
    const first = await readAll(verlConsoleReader, file);
    assert.deepEqual(pointsOf(first).map((p) => p.step), [1]);
    appendFileSync(file, '4\n');
    const end = first.at(-1)!.at.endOffset;
    const next = await readAll(verlConsoleReader, file, end, 2);
    assert.deepEqual(pointsOf(next).map((p) => [p.step, p.value]), [[2, 0.4]]);
    assert.equal(next[0]!.at.line, 2);
  });

  it('bounds memory on a huge line and reports it', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'huge.log');
    writeFileSync(file, `(TaskRunner pid=1) step:1 - a:0.5 - b:${'9'.repeat(MAX_LINE_BYTES + 10)}\n(TaskRunner pid=1) step:2 - a:0.25\n`);
    let longest = 0;
    for await (const l of completeLines(file, 0, 1)) longest = Math.max(longest, l.text.length);
    assert.ok(longest <= MAX_LINE_BYTES);
    const items = await readAll(verlConsoleReader, file);
    assert.deepEqual(pointsOf(items).map((p) => [p.step, p.metric, p.value]), [[1, 'a', 0.5], [2, 'a', 0.25]], 'the cut value is not read');
    assert.match(badOf(items)[0]!.bad, /longer than/);
  });
});

describe('TensorBoard event files', () => {
  it('CRC-32C gives the standard check value', () => {
    assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
  });

  it('encodes an Event with the field numbers and wire types of event.proto / summary.proto', () => {
    const bytes = Buffer.from(EventType.encode(EventType.fromObject({ wall_time: 1.5, step: 3, summary: { value: [{ tag: 'a', simple_value: 0.5 }] } })).finish());
    // wall_time=1 (fixed64), step=2 (varint), summary=5 (bytes) { value=1 { tag=1 "a", simple_value=2 (fixed32) } }
    const f64 = Buffer.alloc(8);
    f64.writeDoubleLE(1.5);
    const expected = Buffer.concat([Buffer.from([0x09]), f64, Buffer.from([0x10, 0x03, 0x2a, 0x0a, 0x0a, 0x08, 0x0a, 0x01, 0x61, 0x15, 0x00, 0x00, 0x00, 0x3f])]);
    assert.deepEqual(bytes, expected);
  });

  it('reads scalars written as simple_value and as TF2 scalar tensors; skips non-scalars; reports a corrupt record with its offset and reads on', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'events.out.tfevents.1764000000.node-1.1.0');
    const content = Buffer.alloc(4);
    content.writeFloatLE(0.25);
    const records = [
      eventRecord({ wall_time: 1764000000, file_version: 'brain.Event:2' }),
      eventRecord({ wall_time: 1764000060, step: 1, summary: { value: [{ tag: 'actor/entropy', simple_value: 0.5 }] } }),
      eventRecord({ wall_time: 1764000120, step: 2, summary: { value: [{ tag: 'actor/entropy', tensor: { dtype: 1, tensor_content: content } }, { tag: 'critic/score/mean', tensor: { dtype: 2, double_val: [0.75] } }] } }),
      eventRecord({ wall_time: 1764000130, step: 2, summary: { value: [{ tag: 'histo', tensor: { dtype: 1, float_val: [1, 2, 3] } }] } }),
      eventRecord({ wall_time: 1764000180, step: 3, summary: { value: [{ tag: 'actor/entropy', simple_value: 0.125 }] } }),
      eventRecord({ wall_time: 1764000240, step: 4, summary: { value: [{ tag: 'actor/entropy', simple_value: 0.0625 }] } }),
    ];
    const corruptAt = records.slice(0, 4).reduce((n, r) => n + r.length, 0);
    const hit = records[4]!;
    hit[20] = hit[20]! ^ 0xff; // flipped bits in the step-3 record's data
    const half = eventRecord({ wall_time: 1764000300, step: 5, summary: { value: [{ tag: 'actor/entropy', simple_value: 0.03 }] } });
    writeFileSync(file, Buffer.concat([...records, half.subarray(0, 10)]));
    assert.equal(curveReaderFor(file), tensorboardReader);
    const items = await readAll(tensorboardReader, file);
    assert.deepEqual(pointsOf(items).map((p) => [p.step, p.metric, p.value, p.wallTime]), [
      [1, 'actor/entropy', 0.5, 1764000060],
      [2, 'actor/entropy', 0.25, 1764000120],
      [2, 'critic/score/mean', 0.75, 1764000120],
      [4, 'actor/entropy', 0.0625, 1764000240],
    ]);
    const bad = badOf(items);
    assert.equal(bad.length, 1);
    assert.equal(bad[0]!.at.offset, corruptAt);
    assert.match(bad[0]!.bad, /CRC-32C/);
    // The half-written record is read once it is whole.
    appendFileSync(file, half.subarray(10));
    const next = await readAll(tensorboardReader, file, items.at(-1)!.at.endOffset);
    assert.deepEqual(pointsOf(next).map((p) => [p.step, p.value]), [[5, Math.fround(0.03)]]);
  });

  it('stops at a record length that fails its CRC, saying where', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'events.out.tfevents.1.x');
    const good = eventRecord({ wall_time: 1, step: 1, summary: { value: [{ tag: 'a', simple_value: 1 }] } });
    const broken = eventRecord({ wall_time: 2, step: 2, summary: { value: [{ tag: 'a', simple_value: 2 }] } });
    broken[9] = broken[9]! ^ 0x01;
    writeFileSync(file, Buffer.concat([good, broken]));
    const items = await readAll(tensorboardReader, file);
    assert.equal(pointsOf(items).length, 1);
    assert.equal(badOf(items)[0]!.at.offset, good.length);
    assert.match(badOf(items)[0]!.bad, /length fails its CRC-32C/);
  });
});

describe('verl file logger and MLflow file store', () => {
  it('reads {"step", "data"} lines, Python NaN included; reports a line that is not one', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'gsm8k_grpo.jsonl');
    writeFileSync(file, '{"step": 1, "data": {"actor/entropy": 0.61, "critic/score/mean": 0.2}}\n{"step": 2, "data": {"actor/entropy": NaN, "actor/grad_norm": 0.3}}\nnot json\n{"data": {}}\n');
    assert.equal(curveReaderFor(file), verlFileReader);
    const items = await readAll(verlFileReader, file);
    assert.deepEqual(pointsOf(items).map((p) => [p.step, p.metric, p.value]), [[1, 'actor/entropy', 0.61], [1, 'critic/score/mean', 0.2], [2, 'actor/entropy', NaN], [2, 'actor/grad_norm', 0.3]]);
    assert.deepEqual(badOf(items).map((b) => b.at.line), [3, 4]);
  });

  it('reads metric files with nested keys, names the run from meta.yaml, reports a malformed line', async () => {
    const dir = tempDir();
    const run = writeMlflowRun(path.join(dir, 'mlruns'), '5f0c2a', 'grpo-v3', [{ 'actor/entropy': 0.5, 'val-core/reward/mean@1': 0.3 }, { 'actor/entropy': 0.4, 'val-core/reward/mean@1': 0.35 }]);
    const file = path.join(run, 'metrics', 'actor', 'entropy');
    appendFileSync(file, '1764000003000 oops 3\n');
    assert.equal(curveReaderFor(file), mlflowReader);
    assert.equal(mlflowReader.runName!(file), 'grpo-v3');
    const items = await readAll(mlflowReader, file);
    assert.deepEqual(pointsOf(items).map((p) => [p.step, p.metric, p.value, p.wallTime]), [[1, 'actor/entropy', 0.5, 1764000001], [2, 'actor/entropy', 0.4, 1764000002]]);
    assert.equal(badOf(items)[0]!.at.line, 3);
    assert.deepEqual(pointsOf(await readAll(mlflowReader, path.join(run, 'metrics', 'val-core', 'reward', 'mean_at_1'))).map((p) => p.metric), ['val-core/reward/mean_at_1', 'val-core/reward/mean_at_1']);
  });
});
