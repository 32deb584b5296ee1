import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { ImportSummary } from '../../src/core/store/ingest';
import { fixtures } from '../helpers/data';
import { withStore } from '../helpers/store';
import { tempDir } from '../helpers/tmp';

/**
 * prime-rl traces through DuckDB's own reader (the bulk path) and through the streaming
 * reader (`bulk: false`) into fresh stores: every column of every stored row must agree.
 * The lines are written as Python's json.dumps writes them (`, ` and `: `, `1.0` for whole
 * floats, bare NaN), since that is what the orchestrator writes.
 */
const system = '{"role": "system", "content": "Think step by step inside <think>...</think> tags, then give your final answer inside \\\\boxed{}."}';
const user = (q: string) => `{"role": "user", "content": ${JSON.stringify(q)}}`;
const assistant = (a: string) => `{"role": "assistant", "content": ${JSON.stringify(a)}}`;

/** One orchestrator line; `over` replaces or adds fields, given as raw JSON text. */
function trace(i: number, over: Record<string, string> = {}): string {
  const right = i % 3 !== 0;
  const fields: Record<string, string> = {
    example_id: String(100 + (i >> 2)),
    task: '"gsm8k"',
    prompt: `[${system}, ${user(`Problem ${i >> 2}: Natalia sold clips to 48 friends in April — half as many in May. "How many?" \\ é 😀 \u2028 <b>`)}]`,
    completion: `[${assistant(right ? `<think>48 / 2 = 24; 48 + 24 = 72.</think>\n\\boxed{72}` : '<script>alert(1)</script> so \\boxed{96}\t')}]`,
    reward: right ? '1.2' : '0.0',
    timing: `{"start_time": ${1767225601 + ((234567 + i * 7919) % 999983) / 1e6}, "generation_ms": ${812 + i}.0, "scoring_ms": 3.5, "total_ms": ${815.5 + i}}`,
    is_completed: 'true',
    is_truncated: 'false',
    metrics: `{"correct_answer": ${right ? '1.0' : '0.0'}, "format_reward": ${i % 5 === 0 ? 'NaN' : '1.0'}, "used_tool": ${i % 2 === 0 ? 'true' : 'false'}, "length_penalty": ${i % 7 === 0 ? 'null' : '-0.125'}}`,
    answer: i % 4 === 3 ? '""' : '"72"',
    // Whole floats before `,` `}` and `]` (Python writes 1.0; JavaScript 1), in lists and nested objects.
    info: i % 2 ? '{}' : `{"difficulty": 0.5, "tags": ["arith", "word"], "source": {"split": "train", "row": ${i}}, "note": null, "scores": [1.0, 2.5, ${i}.0], "grid": [[0.0], {"k": 4.0}]}`,
    error: 'null',
    stop_condition: i % 6 === 0 ? '"max_turns_reached"' : '"completed"',
    token_usage: `{"input_tokens": 61.0, "output_tokens": ${20 + i}.0}`,
    trajectory: '[]',
    kind: '"train"',
    env_name: '"gsm8k"',
    group_id: `"${(i >> 2).toString(16).padStart(8, '0')}-3d4a-4e5f-9a0b-1c2d3e4f5a6b"`,
    policy_version: String(2 + (i >> 4)),
    advantage: right ? '0.35' : '-1.05',
    ...over,
  };
  return `{${Object.entries(fields).map(([k, v]) => `${JSON.stringify(k)}: ${v}`).join(', ')}}`;
}

function dump(root: string, files: Record<string, string[]>): string {
  const dir = path.join(root, 'run', 'rollouts');
  for (const [name, lines] of Object.entries(files)) {
    const file = path.join(dir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, lines.map((l) => `${l}\n`).join(''));
  }
  return path.join(root, 'run');
}

async function bothPaths(root: string, dir: string, opts: { onError?: 'fail' | 'skip' } = {}) {
  const results: { summary: ImportSummary; rows: Record<string, unknown>[] }[] = [];
  for (const bulk of [true, false]) {
    results.push(
      await withStore(path.join(root, `${bulk ? 'bulk' : 'stream'}-${Math.random().toString(36).slice(2)}.duckdb`), async (s) => {
        const summary = await s.import([dir], { run: 'r', bulk, ...opts });
        return { summary, rows: await s.all<Record<string, unknown>>(`select * from rollout_rows order by raw_ref`) };
      }),
    );
  }
  return results as [(typeof results)[number], (typeof results)[number]];
}

/**
 * Rows compared without their ids: the bulk path numbers files by query (one per record
 * shape), the streaming path in file order, and a file handed from one to the other has
 * used up ids.
 */
const sansIds = (rows: Record<string, unknown>[]) => rows.map(({ id: _id, import_id: _importId, ...rest }) => rest);
const readers = (s: ImportSummary) => s.files.map((f) => [f.file.split('/rollouts/')[1], f.reader, f.rollouts]);

describe('prime-rl bulk import (real DuckDB, real files)', () => {
  it('stores what the streaming path stores, every column of every row', async () => {
    const root = tempDir();
    const errored = `{"error": "SandboxError", "error_chain_repr": "SandboxError('timed out')", "error_chain_str": "SandboxError: timed out after 30s \\"x\\""}`;
    const dir = dump(root, {
      'step_1/train/all/traces.jsonl': Array.from({ length: 40 }, (_, i) => trace(i)),
      'step_2/train/all/traces.jsonl': [
        ...Array.from({ length: 6 }, (_, i) => trace(i + 40)),
        // Errored: no completion, NaN reward, an error object; and one with a message and a type.
        trace(46, { completion: 'null', reward: 'NaN', error: errored, stop_condition: '"has_error"', token_usage: '{"input_tokens": 0.0, "output_tokens": 0.0}' }),
        trace(47, { completion: 'null', reward: 'null', error: '{"type": "ValueError", "message": "bad\\ninput"}', metrics: 'null' }),
        trace(48, { error: '"plain text error"', advantage: 'null', group_id: 'null' }),
        trace(49, { group_id: 'null', example_id: '"ex-49"', env_name: '""', timing: '{"generation_ms": 1.0}', token_usage: 'null' }),
        trace(50, { group_id: 'null', example_id: 'null', env_name: 'null', task: '"other-task"' }),
        trace(51, { example_id: '7.0', group_id: '12', reward: '1', advantage: '2.50' }),
      ],
      // An evaluation, with text prompts and completions and another metric set: another query.
      'step_2/eval/all/traces.jsonl': Array.from({ length: 5 }, (_, i) =>
        trace(i, { prompt: JSON.stringify(`Q${i}: 2+2?`), completion: JSON.stringify(i % 2 ? 'It is \\boxed{4}.' : 'A: 4'), metrics: `{"acc": ${i % 2}.0}`, kind: '"eval"' }),
      ),
      // Old layout, no metadata keys at all.
      'step_3/train_rollouts.jsonl': [0, 1, 2].map((i) => `{"example_id": ${i}, "prompt": ${JSON.stringify(`p${i}`)}, "completion": [${assistant(`r${i}`)}], "reward": ${i}.0}`),
    });
    const [bulk, stream] = await bothPaths(root, dir);
    assert.deepEqual(readers(bulk.summary), [
      ['step_1/train/all/traces.jsonl', 'duckdb', 40],
      ['step_2/eval/all/traces.jsonl', 'duckdb', 5],
      ['step_2/train/all/traces.jsonl', 'duckdb', 12],
      ['step_3/train_rollouts.jsonl', 'duckdb', 3],
    ]);
    assert.ok(stream.summary.files.every((f) => f.reader === 'stream'));
    assert.equal(bulk.rows.length, 60);
    assert.deepEqual(sansIds(bulk.rows), sansIds(stream.rows));
    assert.deepEqual(bulk.rows.map((row) => Number(row.id)).sort((a, b) => a - b), Array.from({ length: 60 }, (_, i) => i + 1));
    // What the comparison covers: messages as JSON text, numbers as JavaScript writes them.
    const r = bulk.rows.find((row) => String(row.raw_ref).endsWith('step_1/train/all/traces.jsonl:2'))!;
    assert.equal(r.prompt_format, 'messages');
    assert.equal(r.response_format, 'turns');
    assert.match(String(r.extra), /"timing":\{"start_time":1767225601\.\d+,"generation_ms":813,"scoring_ms":3\.5/);
    assert.equal(r.reward_components, '{"correct_answer":1,"format_reward":1,"used_tool":0,"length_penalty":-0.125}');
    assert.ok(bulk.rows.some((row) => row.errors === '["SandboxError: timed out after 30s \\"x\\""]'));
    const withLists = bulk.rows.find((row) => String(row.raw_ref).endsWith('step_1/train/all/traces.jsonl:3'))!;
    assert.match(String(withLists.extra), /"scores":\[1,2\.5,2\],"grid":\[\[0\],\{"k":4\}\]/);
  });

  it('streams a file whose records it cannot map exactly, with the rows the streaming path gives', async () => {
    const root = tempDir();
    const cases: [string, string][] = [
      ['a control character DuckDB escapes in upper case', trace(1, { completion: `[${assistant('colour \u001b[31mred')}]` })],
      ['tool use (steps)', trace(1, { completion: `[{"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\\"command\\": \\"ls\\"}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "a.py"}, ${assistant('done')}]` })],
      ['two assistant turns', trace(1, { completion: `[${assistant('one')}, ${user('more')}, ${assistant('two')}]` })],
      ['a key the first record lacks', trace(1, { extra_key: '1' })],
      ['a key missing', trace(1).replace(/, "kind": "train"/, '')],
      ['keys in another order', trace(1).replace(/"kind": "train", ("env_name": "gsm8k"), /, '$1, "kind": "train", ')],
      ['a number JavaScript writes with an exponent', trace(1, { info: '{"lr": 1e-07}' })],
      ['a metric JavaScript writes with an exponent', trace(1, { metrics: '{"correct_answer": 1e-07, "format_reward": 1.0, "used_tool": true, "length_penalty": 0.0}' })],
      ['an example id with more digits than a double holds', trace(1, { example_id: '123456789012345678' })],
      ['text that reads like a whole number in extra', trace(1, { info: '{"note": "v1.0, then v2.0]"}' })],
      ['a whole-number key', trace(1, { info: '{"3": "x", "a": 1}' })],
      ['per-token values', trace(1, { trajectory: '[{"tokens": {"completion_ids": [1, 2], "completion_logprobs": [-0.5, -0.25]}}]' })],
      ['an error object without a message', trace(1, { error: '{"code": 3}' })],
      ['a metric that is text', trace(1, { metrics: '{"correct_answer": "yes", "format_reward": 1.0, "used_tool": true, "length_penalty": 0.0}' })],
      ['a bad prompt', trace(1, { prompt: '[{"content": "no role"}]' })],
      ['a role that is not text', trace(1, { prompt: `[${system}, {"role": null, "content": "q"}]` })],
      ['a number in a message', trace(1, { completion: '[{"role": "assistant", "content": "x", "tokens": 5.0}]' })],
      ['a key twice in a message', trace(1, { completion: '[{"role": "assistant", "content": "x", "content": "y"}]' })],
      ['a whole-number key in a message', trace(1, { completion: '[{"role": "assistant", "7": "x"}]' })],
      ['a list in a message', trace(1, { completion: '[{"role": "assistant", "content": [{"type": "text", "text": "x"}]}]' })],
      ['a message that is not an object', trace(1, { prompt: `[${system}, "q"]` })],
    ];
    for (const [what, line] of cases) {
      const dir = dump(path.join(root, what.replace(/\W+/g, '-')), { 'step_1/train/all/traces.jsonl': [trace(0), line, trace(2)] });
      const [bulk, stream] = await bothPaths(root, dir, { onError: 'skip' });
      assert.deepEqual(readers(bulk.summary).map((f) => f[1]), ['stream'], what);
      assert.deepEqual(sansIds(bulk.rows), sansIds(stream.rows), what);
      assert.equal(bulk.summary.rollouts + bulk.summary.badRecords, 3, what);
    }
  });

  it('fails a malformed line with file:line and leaves the store as it was', async () => {
    const root = tempDir();
    const dir = dump(root, { 'step_1/train/all/traces.jsonl': [trace(0)], 'step_2/train/all/traces.jsonl': [trace(1), '{"example_id": 1, "prompt": ', trace(2)] });
    await withStore(path.join(root, 's.duckdb'), async (s) => {
      await assert.rejects(s.import([dir], { run: 'r' }), (e: unknown) => e instanceof Error && e.message.startsWith(`${path.join(dir, 'rollouts', 'step_2/train/all/traces.jsonl')}:2: not valid JSON`));
      assert.equal((await s.one<{ n: number }>(`select count(*) n from rollout_rows`))!.n, 0);
    });
  });

  it('the fixture (tool use, per-token values, an errored rollout) streams and imports as before', async () => {
    const root = tempDir();
    const [bulk, stream] = await bothPaths(root, path.join(fixtures, 'prime-rl'));
    assert.deepEqual(readers(bulk.summary), [['step_3/train/all/traces.jsonl', 'stream', 4]]);
    assert.deepEqual(sansIds(bulk.rows), sansIds(stream.rows));
  });
});
