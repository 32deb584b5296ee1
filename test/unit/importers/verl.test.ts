import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { verlImporter } from '../../../src/core/store/importers/verl';
import { fixtures } from '../../helpers/data';
import { readAll } from '../../helpers/importers';
import { tempDir } from '../../helpers/tmp';

const train = path.join(fixtures, 'verl', 'rollout_data', '12.jsonl');
const val = path.join(fixtures, 'verl', 'validation_data', '12.jsonl');

describe('verl importer', () => {
  it('pins every field of a record', async () => {
    const { good, bad } = await readAll(verlImporter, train);
    assert.equal(bad.length, 0);
    assert.equal(good.length, 6);
    assert.deepEqual(good[2]!.record, {
      step: 12,
      split: 'train',
      prompt: '<|im_start|>user\nJanet has 3 apples and buys 4 more. How many apples? Put the answer in \\boxed{}.<|im_end|>\n<|im_start|>assistant\n',
      response: '<script>alert(1)</script> I think 7',
      groundTruth: '7',
      reward: 0.1,
      rewardComponents: { format_reward: 0 },
      correct: false,
      extractedAnswer: '[INVALID]',
      dataSource: null,
      numTurns: 1,
      extra: {},
    });
    assert.deepEqual(good[2]!.at, { file: train, line: 3, endOffset: good[2]!.at.endOffset });
  });

  it('takes the split from the validation directory', async () => {
    const { good } = await readAll(verlImporter, val);
    assert.equal(good[0]!.record.split, 'val');
  });

  it('recognizes its layout and nothing else', () => {
    const head = '{"input": "q", "output": "a", "gts": "1", "score": 1.0, "step": 3}\n';
    assert.equal(verlImporter.matches('/runs/a/rollout_data/3.jsonl', head), true);
    assert.equal(verlImporter.matches('/runs/a/rollout_data/traces.jsonl', head), false);
    assert.equal(verlImporter.matches('/runs/a/3.jsonl', '{"input_prompt": "q", "output_response": "a", "score": 1}'), false);
  });

  it('reports a malformed line with its number and the reason, and goes on', async () => {
    const dir = tempDir();
    const f = path.join(dir, '5.jsonl');
    writeFileSync(f, '{"input":"q","output":"a","score":1,"step":5}\n{"input":"q","output":"a","score":1,\n{"input":"q","output":null,"score":1}\n{"input":"q","output":"b","score":"high"}\n{"input":"q","output":"c","score":0,"step":5}\n');
    const { good, bad } = await readAll(verlImporter, f);
    assert.equal(good.length, 2);
    assert.deepEqual(bad.map((b) => b.error.line), [2, 3, 4]);
    assert.match(bad[0]!.error.message, /5\.jsonl:2: not valid JSON/);
    assert.match(bad[1]!.error.reason, /"output" is missing/);
    assert.match(bad[2]!.error.reason, /"score" must be a number, found a string/);
  });

  it('resumes from an end offset at the next record', async () => {
    const { good } = await readAll(verlImporter, train);
    const resumed = await readAll(verlImporter, train, { startOffset: good[3]!.at.endOffset, startLine: 5 });
    assert.deepEqual(resumed.good.map((g) => g.at.line), [5, 6]);
    assert.equal(resumed.good[0]!.record.response, good[4]!.record.response);
  });
});
