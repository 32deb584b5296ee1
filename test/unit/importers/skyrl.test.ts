import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ImportError, isBad, type ImporterItem } from '../../../src/core/store/rows';
import { parsePythonJson } from '../../../src/core/store/importers/pythonJson';
import { skyrlImporter } from '../../../src/core/store/importers/skyrl';
import type { ReadOptions } from '../../../src/core/store/importers/types';
import { repoRoot, tempDir } from '../../helpers/tmp';

const dir = path.join(repoRoot, 'test/fixtures/importers/skyrl/dumped_evals/global_step_20_evals');
const fixture = path.join(dir, 'gsm8k.jsonl');
const primeRlFixture = path.join(repoRoot, 'test/fixtures/importers/prime-rl/rollouts/step_3/train/all/traces.jsonl');
const noTables = { readParquet: () => { throw new Error('no Parquet here'); } };

async function readAll(file: string, opts: Partial<ReadOptions> = {}): Promise<ImporterItem[]> {
  const items: ImporterItem[] = [];
  for await (const item of skyrlImporter.read(file, { tables: noTables, ...opts })) items.push(item);
  return items;
}

const q0 = 'Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. How many clips did Natalia sell altogether in April and May?';

describe('SkyRL importer', () => {
  it('reads every field of an eval dump line as dump_per_dataset_eval_results wrote it', async () => {
    const items = await readAll(fixture);
    assert.equal(items.length, 5);
    const firstLineBytes = Buffer.byteLength(readFileSync(fixture, 'utf8').split('\n')[0]!, 'utf8') + 1;
    assert.deepEqual(items[0], {
      record: {
        step: 20,
        split: 'val',
        promptId: '0',
        groupId: null,
        prompt: `<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n${q0} Let's think step by step and output the final answer after "####".<|im_end|>\n<|im_start|>assistant\n`,
        response: 'In May she sold 48 / 2 = 24 clips, so 48 + 24 = 72 in total.\n#### 72<|im_end|>',
        groundTruth: '72',
        reward: 1,
        rewardComponents: {},
        correct: null,
        extractedAnswer: null,
        advantage: null,
        stopReason: 'stop',
        responseTokens: null,
        numTurns: 1,
        errors: [],
        timingMs: null,
        dataSource: 'gsm8k',
        envClass: 'gsm8k',
        extra: {
          env_extras: {
            data_source: 'gsm8k',
            reward_spec: { method: 'rule', ground_truth: '72' },
            extra_info: {
              split: 'test',
              index: 0,
              answer: 'Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips altogether in April and May.\n#### 72',
              question: q0,
            },
          },
        },
      },
      at: { file: fixture, line: 1, endOffset: firstLineBytes },
    });
  });

  it('keeps HTML in a response verbatim', async () => {
    const second = (await readAll(fixture))[1];
    assert.ok(second && !isBad(second));
    assert.equal(second.record.response, '<script>alert(1)</script> She sold 48 + 48 = 96 clips.\n#### 96<|im_end|>');
    assert.equal(second.record.reward, 0);
  });

  it('reads a NaN score, as json.dumps writes it, as a reward not computed', async () => {
    const third = (await readAll(fixture))[2];
    assert.ok(third && !isBad(third), JSON.stringify(third));
    assert.equal(third.record.reward, null);
    assert.equal(third.record.groundTruth, '10');
    assert.equal(third.at.line, 3);
  });

  it('sums a per-token score list into the reward and keeps the list', async () => {
    const fifth = (await readAll(fixture))[4];
    assert.ok(fifth && !isBad(fifth));
    assert.equal(fifth.record.reward, 1);
    assert.deepEqual(fifth.record.extra?.['score_per_token'], [0, 0, 0, 1]);
    assert.equal(fifth.record.promptId, '2');
  });

  it('keeps the truncated stop reason', async () => {
    const fourth = (await readAll(fixture))[3];
    assert.ok(fourth && !isBad(fourth));
    assert.equal(fourth.record.stopReason, 'length');
  });

  it('yields malformed lines as BadRecords with their line numbers, and goes on', async () => {
    const lines = readFileSync(fixture, 'utf8').split('\n');
    lines[1] = '{"input_prompt": "cut off", "output_resp';
    lines[3] = JSON.stringify({ input_prompt: 'p', output_response: 'r', score: 'high', stop_reason: 'stop', env_class: 'gsm8k', env_extras: null, data_source: 'gsm8k' });
    lines.splice(4, 0, JSON.stringify({ input_prompt: ['p'], output_response: 'r', score: 1 }));
    const work = path.join(tempDir(), 'dumped_evals', 'global_step_20_evals');
    mkdirSync(work, { recursive: true });
    const file = path.join(work, 'gsm8k.jsonl');
    writeFileSync(file, lines.join('\n'));

    const items = await readAll(file);
    assert.deepEqual(items.map((i) => `${isBad(i) ? 'bad' : 'ok'}@${i.at.line}`), ['ok@1', 'bad@2', 'ok@3', 'bad@4', 'bad@5', 'ok@6']);
    const [, parse, , score, prompt] = items;
    assert.ok(parse && isBad(parse) && score && isBad(score) && prompt && isBad(prompt));
    assert.ok(parse.error instanceof ImportError);
    assert.equal(parse.error.line, 2);
    assert.match(parse.error.reason, /^not valid JSON: /);
    assert.equal(parse.error.raw, '{"input_prompt": "cut off", "output_resp');
    assert.equal(score.error.reason, 'score: expected a number or a list of per-token numbers, got a string');
    assert.equal(score.error.line, 4);
    assert.equal(prompt.error.reason, 'input_prompt: expected a string, got a list');
    assert.equal(prompt.at.file, file);
  });

  it('resumes after a record from its endOffset', async () => {
    const all = await readAll(fixture);
    const second = all[1]!;
    const rest = await readAll(fixture, { startOffset: second.at.endOffset, startLine: 3 });
    assert.deepEqual(rest.map((i) => i.at.line), [3, 4, 5]);
    assert.deepEqual(rest, all.slice(2));
  });

  it('takes the split from the caller when given, and step 0 for an eval-only dump', async () => {
    const [first] = await readAll(fixture, { split: 'train' });
    assert.ok(first && !isBad(first));
    assert.equal(first.record.split, 'train');
    const work = path.join(tempDir(), 'export', 'dumped_evals', 'eval_only');
    mkdirSync(work, { recursive: true });
    const file = path.join(work, 'aime.jsonl');
    writeFileSync(file, JSON.stringify({ input_prompt: 'p', output_response: 'r', score: 0.5, stop_reason: null, env_class: 'aime', env_extras: { uid_hint: 1 }, data_source: 'aime', uid: 'q7', exception_type: 'TimeoutError' }) + '\n');
    const [item] = await readAll(file);
    assert.ok(item && !isBad(item));
    assert.equal(item.record.step, 0);
    assert.equal(item.record.promptId, 'q7');
    assert.equal(item.record.groupId, '0:q7');
    assert.deepEqual(item.record.errors, ['TimeoutError']);
    assert.equal(item.record.stopReason, null);
  });

  it('matches per-data-source eval dumps, not the aggregated metrics or another format', () => {
    const head = readFileSync(fixture, 'utf8').slice(0, 120);
    assert.equal(skyrlImporter.matches(fixture, head), true);
    assert.equal(skyrlImporter.matches('C:\\exp\\dumped_evals\\global_step_5_evals\\openai_gsm8k.jsonl', head), true);
    assert.equal(skyrlImporter.matches(path.join(dir, 'aggregated_results.jsonl'), readFileSync(path.join(dir, 'aggregated_results.jsonl'), 'utf8')), false);
    // Another format's file, at its own path and at a SkyRL path.
    const primeHead = readFileSync(primeRlFixture, 'utf8').slice(0, 200);
    assert.equal(skyrlImporter.matches(primeRlFixture, primeHead), false);
    assert.equal(skyrlImporter.matches(path.join(dir, 'traces.jsonl'), primeHead), false);
    assert.equal(skyrlImporter.matches('/exp/evals/gsm8k.jsonl', head), false);
  });

  it('reads the NaN / Infinity tokens of Python JSON as null, never inside strings', () => {
    assert.deepEqual(parsePythonJson('{"a": "NaN stays", "b": NaN, "c": [-Infinity, Infinity], "d": "x\\"NaN", "e": 1.5}'), {
      value: { a: 'NaN stays', b: null, c: [null, null], d: 'x"NaN', e: 1.5 },
      nonFinite: 3,
    });
    assert.equal(parsePythonJson('{"a": 1}'), null);
    assert.equal(parsePythonJson('{"a": NaN'), null);
    assert.equal(parsePythonJson('{"a": NaNa}'), null);
  });
});
