import assert from 'node:assert/strict';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { ImportError, isBad, type ImporterItem } from '../../../src/core/store/rows';
import { trlImporter } from '../../../src/core/store/importers/trl';
import type { TableReader } from '../../../src/core/store/importers/types';
import { duckdbTableReader } from '../../../src/core/store/tableReader';
import { repoRoot, tempDir } from '../../helpers/tmp';

const fixture = path.join(repoRoot, 'test/fixtures/importers/trl/completions/completions_00010.parquet');
const skyrlFixture = path.join(repoRoot, 'test/fixtures/importers/skyrl/dumped_evals/global_step_20_evals/gsm8k.jsonl');
const chatPrompt = 'system\nSolve the problem. Think in <think></think>, then answer in \\boxed{}.\nuser\nWhat is 2 + 2?\nassistant\n';

const tables = duckdbTableReader();
after(() => tables.close());

async function readAll(file: string, reader: TableReader = tables): Promise<ImporterItem[]> {
  const items: ImporterItem[] = [];
  for await (const item of trlImporter.read(file, { tables: reader })) items.push(item);
  return items;
}

/** A TableReader over rows in memory, to feed the importer what a Parquet file could hold. */
function rowsReader(rows: Record<string, unknown>[]): TableReader {
  return {
    async *readParquet() {
      yield* rows;
    },
  };
}

describe('TRL importer', () => {
  it('reads every field of a completions_{step}.parquet row as GRPOTrainer.log wrote it', async () => {
    const items = await readAll(fixture);
    assert.equal(items.length, 4);
    assert.deepEqual(items[0], {
      record: {
        step: 10,
        split: 'train',
        promptId: null,
        groupId: null,
        prompt: chatPrompt,
        response: '<think>2 + 2 = 4</think>\n\\boxed{4}',
        groundTruth: '4',
        reward: 2,
        rewardComponents: { accuracy_reward: 1, think_format_reward: 1 },
        correct: null,
        extractedAnswer: null,
        advantage: 0.7070567847218314,
        stopReason: null,
        responseTokens: null,
        numTurns: 1,
        errors: [],
        timingMs: null,
        dataSource: null,
        envClass: null,
        extra: { solution: '4', gold_parsed: "[4, '4']", answer_parsed: "[4, '4']" },
      },
      at: { file: fixture, record: 1 },
    });
  });

  it('keeps HTML in a completion verbatim and the two samples of one prompt apart', async () => {
    const [first, second] = await readAll(fixture);
    assert.ok(first && !isBad(first) && second && !isBad(second));
    assert.equal(second.record.response, 'The answer is <script>alert(1)</script> \\boxed{5}');
    assert.equal(second.record.prompt, first.record.prompt);
    assert.equal(second.record.advantage, -0.7070567847218314);
    assert.equal(second.record.reward, 0);
  });

  it('leaves a reward function that did not score a row (NaN, written as null) out of the sum', async () => {
    const items = await readAll(fixture);
    const third = items[2];
    assert.ok(third && !isBad(third));
    assert.deepEqual(third.record.rewardComponents, { think_format_reward: 0 });
    assert.equal(third.record.reward, 0);
    const fourth = items[3];
    assert.ok(fourth && !isBad(fourth));
    assert.deepEqual(fourth.record.rewardComponents, { think_format_reward: 1 });
    assert.equal(fourth.record.reward, 1);
    assert.equal(fourth.record.groundTruth, 'twenty-one');
  });

  it('reads a NaN reward cell as not computed, and a row where no reward function scored as no reward', async () => {
    const items = await readAll(fixture, rowsReader([
      { step: 10n, prompt: 'p', completion: 'c', accuracy_reward: Number.NaN, format_reward: 0.5, advantage: 0.25 },
      { step: 10n, prompt: 'p', completion: 'c', accuracy_reward: Number.NaN, format_reward: null, advantage: Number.NaN },
    ]));
    assert.ok(items[0] && !isBad(items[0]) && items[1] && !isBad(items[1]));
    assert.deepEqual(items[0].record.rewardComponents, { format_reward: 0.5 });
    assert.equal(items[0].record.reward, 0.5);
    assert.equal(items[0].record.advantage, 0.25);
    assert.deepEqual(items[1].record.rewardComponents, {});
    assert.equal(items[1].record.reward, null);
    assert.equal(items[1].record.advantage, null);
  });

  it('reads conversational prompts and completions logged as message lists', async () => {
    const prompt = [{ role: 'user', content: 'What is 2 + 2?' }];
    const completion = [{ role: 'assistant', content: '4' }];
    const [item] = await readAll(fixture, rowsReader([{ step: 3n, prompt, completion, correctness: 1 }]));
    assert.ok(item && !isBad(item));
    assert.deepEqual(item.record.prompt, prompt);
    assert.deepEqual(item.record.response, completion);
    assert.equal(item.record.step, 3);
    assert.equal(item.record.reward, 1);
  });

  it('yields a malformed row as a BadRecord at its row number, and goes on', async () => {
    const items = await readAll(fixture, rowsReader([
      { step: 10n, prompt: 'ok', completion: 'fine', r: 1 },
      { step: 10n, prompt: 42n, completion: 'fine', r: 1 },
      { step: 10n, prompt: 'ok', completion: null, r: 1 },
      { step: 'ten', prompt: 'ok', completion: 'fine', r: 1 },
      { step: 10n, prompt: 'ok', completion: 'still fine', r: 0 },
    ]));
    assert.deepEqual(items.map((i) => (isBad(i) ? `bad@${i.at.record}` : `ok@${i.at.record}`)), ['ok@1', 'bad@2', 'bad@3', 'bad@4', 'ok@5']);
    const bad = items[1];
    assert.ok(bad && isBad(bad));
    assert.ok(bad.error instanceof ImportError);
    assert.equal(bad.error.file, fixture);
    assert.equal(bad.error.reason, 'row 2: prompt: expected a string or a list of {role, content} messages, got a bigint');
    assert.equal(bad.error.raw, '{"step":10,"prompt":42,"completion":"fine","r":1}');
    assert.ok(items[2] && isBad(items[2]));
    assert.equal(items[2].error.reason, 'row 3: completion: expected a string or a list of {role, content} messages, got null');
    assert.ok(items[3] && isBad(items[3]));
    assert.equal(items[3].error.reason, 'row 4: step: expected an integer, got a string');
  });

  it('takes the step from the file name when the rows have none, and eval logs as val', async () => {
    const file = '/runs/a/completions/eval/completions_00042.parquet';
    const [item] = await readAll(file, rowsReader([{ prompt: 'p', completion: 'c' }]));
    assert.ok(item && !isBad(item));
    assert.equal(item.record.step, 42);
    assert.equal(item.record.split, 'val');
  });

  it('releases the table reader when the caller stops early', async () => {
    let released = false;
    const reader: TableReader = {
      async *readParquet() {
        try {
          yield { step: 1n, prompt: 'p', completion: 'c' };
          yield { step: 1n, prompt: 'p', completion: 'c' };
        } finally {
          released = true;
        }
      },
    };
    for await (const _item of trlImporter.read(fixture, { tables: reader })) break;
    assert.equal(released, true);
  });

  it('throws an ImportError for a file it cannot read', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'completions', 'completions_00001.parquet');
    await assert.rejects(readAll(file), (err: unknown) => err instanceof ImportError && err.file === file && /cannot read the Parquet file/.test(err.reason));
  });

  it('matches the completions layout of a Parquet file and nothing else', () => {
    assert.equal(trlImporter.matches(fixture, 'PAR1\u0015\u0004'), true);
    assert.equal(trlImporter.matches('C:\\runs\\out\\completions\\completions_00010.parquet', 'PAR1'), true);
    assert.equal(trlImporter.matches('/runs/out/completions/train/completions_00010.parquet', 'PAR1'), true);
    // Another format's file: SkyRL's eval dump.
    assert.equal(trlImporter.matches(skyrlFixture, '{"input_prompt": "hi"'), false);
    // The right name, but not Parquet inside.
    assert.equal(trlImporter.matches(fixture, '{"step": 10}'), false);
    // Parquet, but not where TRL writes completions.
    assert.equal(trlImporter.matches('/runs/out/data/train-00000.parquet', 'PAR1'), false);
    assert.equal(trlImporter.matches('/runs/out/completions/completions.parquet', 'PAR1'), false);
  });
});

describe('duckdbTableReader', () => {
  it('streams every row of a Parquet file larger than one chunk, in order, with BIGINT as bigint', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'big.parquet');
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    await conn.run(`copy (select i::bigint as step, 'row ' || i as prompt, i / 2 as half from range(5000) t(i)) to '${file}' (format parquet)`);
    conn.closeSync();
    db.closeSync();
    let n = 0;
    for await (const row of tables.readParquet(file)) {
      assert.equal(row['step'], BigInt(n));
      assert.equal(row['prompt'], `row ${n}`);
      assert.equal(row['half'], n / 2);
      n++;
    }
    assert.equal(n, 5000);
  });

  it('reads a file whose name would break a quoted SQL string', async () => {
    const dir = tempDir();
    const file = path.join(dir, "it's.parquet");
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    await conn.run('copy (select 1::double as x) to $1 (format parquet)', [file]);
    conn.closeSync();
    db.closeSync();
    const rows = [];
    for await (const row of tables.readParquet(file)) rows.push(row);
    assert.deepEqual(rows, [{ x: 1 }]);
  });

  it('refuses to read after close', async () => {
    const reader = duckdbTableReader();
    reader.close();
    await assert.rejects(async () => {
      for await (const _row of reader.readParquet(fixture)) break;
    }, /closed/);
  });
});
