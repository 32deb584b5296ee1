import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ImportError, isBad, type ImporterItem } from '../../../src/core/store/rows';
import { primeRlImporter } from '../../../src/core/store/importers/primeRl';
import type { ReadOptions } from '../../../src/core/store/importers/types';
import { repoRoot, tempDir } from '../../helpers/tmp';

const fixture = path.join(repoRoot, 'test/fixtures/importers/prime-rl/rollouts/step_3/train/all/traces.jsonl');
const skyrlFixture = path.join(repoRoot, 'test/fixtures/importers/skyrl/dumped_evals/global_step_20_evals/gsm8k.jsonl');
const noTables = { readParquet: () => { throw new Error('no Parquet here'); } };

async function readAll(file: string, opts: Partial<ReadOptions> = {}): Promise<ImporterItem[]> {
  const items: ImporterItem[] = [];
  for await (const item of primeRlImporter.read(file, { tables: noTables, ...opts })) items.push(item);
  return items;
}

/** Byte offset just after line `n` (1-based) of a file. */
function offsetAfter(file: string, n: number): number {
  return readFileSync(file, 'utf8').split('\n').slice(0, n).reduce((sum, line) => sum + Buffer.byteLength(line, 'utf8') + 1, 0);
}

function write(rel: string, lines: string[]): string {
  const file = path.join(tempDir(), rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

const bashDef = { type: 'function', function: { name: 'bash', description: 'Run a bash command in the repository.', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } } };
// The arguments string as Python's json.dumps writes it (", " and ": " separators).
const call = (i: number, command: string) => ({ id: `call_${i}`, type: 'function', function: { name: 'bash', arguments: `{"command": ${JSON.stringify(command)}}` } });
const step = { exitCode: null, formatError: false, timeout: false, truncated: false, tokens: null };

describe('prime-rl importer', () => {
  it('reads every field of a multi-turn tool-use trace, with its steps', async () => {
    const items = await readAll(fixture);
    assert.equal(items.length, 4);
    const response = [
      { role: 'assistant', content: 'Let me find the function.', tool_calls: [call(1, "grep -rn 'def parse' src/")] },
      { role: 'tool', tool_call_id: 'call_1', content: 'src/utils.py:12:def parse(s):' },
      { role: 'assistant', content: '', tool_calls: [call(2, "sed -i 's/int(s)/int(s.strip())/' src/utils.py")] },
      { role: 'tool', tool_call_id: 'call_2', content: '' },
      { role: 'assistant', content: null, tool_calls: [call(3, 'python -m pytest tests/test_utils.py -q')] },
      { role: 'tool', tool_call_id: 'call_3', content: '1 passed in 0.01s' },
      { role: 'assistant', content: 'Fixed: parse() now strips surrounding whitespace.' },
    ];
    assert.deepEqual(items[2], {
      record: {
        step: 3,
        split: 'train',
        promptId: '42',
        groupId: '0a9b8c7d-6e5f-4a3b-8c1d-2e3f4a5b6c7d',
        prompt: [
          { role: 'system', content: 'You are a coding agent. Use the bash tool to inspect and edit the repository, then reply when the tests pass.' },
          { role: 'user', content: 'tests/test_utils.py::test_parse fails on inputs with surrounding whitespace. Fix it.' },
        ],
        response,
        groundTruth: null,
        reward: 1,
        rewardComponents: { tests_passed: 1, total_tool_calls: 3 },
        correct: null,
        extractedAnswer: null,
        advantage: null,
        stopReason: 'no_tools_called',
        responseTokens: 96,
        numTurns: 4,
        errors: [],
        timingMs: 6550,
        dataSource: 'code-agent',
        envClass: null,
        extra: {
          task: 'code-agent',
          timing: { start_time: 1767225601.5, generation_ms: 5120, scoring_ms: 1430, total_ms: 6550 },
          is_completed: true,
          is_truncated: false,
          info: { repo: 'toy-utils', test: 'tests/test_utils.py::test_parse' },
          tool_defs: [bashDef],
          token_usage: { input_tokens: 1840, output_tokens: 96 },
          kind: 'train',
          policy_version: 2,
        },
        steps: [
          { ...step, role: 'assistant', actionKind: 'search', command: "grep -rn 'def parse' src/", observationBytes: null },
          { ...step, role: 'tool', actionKind: 'observation', command: null, observationBytes: 29 },
          { ...step, role: 'assistant', actionKind: 'edit', command: "sed -i 's/int(s)/int(s.strip())/' src/utils.py", observationBytes: null },
          { ...step, role: 'tool', actionKind: 'observation', command: null, observationBytes: 0 },
          { ...step, role: 'assistant', actionKind: 'test', command: 'python -m pytest tests/test_utils.py -q', observationBytes: null },
          { ...step, role: 'tool', actionKind: 'observation', command: null, observationBytes: 17 },
          { ...step, role: 'assistant', actionKind: 'message', command: null, observationBytes: null },
        ],
        // The trajectory's per-token log-probabilities (its token ids are not kept).
        tokens: [{ turn: 0, kind: 'logprob', values: [-0.12, -0.03] }],
      },
      at: { file: fixture, line: 3, endOffset: offsetAfter(fixture, 3) },
    });
  });

  it('reads a single-turn chat rollout with its reward functions and group', async () => {
    const [first, second] = await readAll(fixture);
    assert.ok(first && !isBad(first) && second && !isBad(second));
    assert.equal(first.record.reward, 1.2);
    assert.deepEqual(first.record.rewardComponents, { correct_answer: 1, format_reward: 1 });
    assert.equal(first.record.groundTruth, '72');
    assert.equal(first.record.stopReason, 'max_turns_reached');
    assert.equal(first.record.steps, undefined);
    assert.equal(first.record.groupId, second.record.groupId);
    assert.equal(first.record.promptId, '17');
    assert.deepEqual(second.record.response, [{ role: 'assistant', content: '<script>alert(1)</script> April 48, May 48, so \\boxed{96}' }]);
  });

  it('reads an errored rollout with a NaN reward (as json.dumps writes it) as no reward and its error', async () => {
    const fourth = (await readAll(fixture))[3];
    assert.ok(fourth && !isBad(fourth), JSON.stringify(fourth));
    assert.equal(fourth.record.reward, null);
    assert.deepEqual(fourth.record.rewardComponents, {});
    assert.deepEqual(fourth.record.response, []);
    assert.deepEqual(fourth.record.errors, ['SandboxError: sandbox timed out after 30s']);
    assert.equal(fourth.record.numTurns, 0);
    assert.equal(fourth.record.stopReason, 'has_error');
  });

  it('yields malformed lines as BadRecords with their line numbers, and goes on', async () => {
    const lines = readFileSync(fixture, 'utf8').trimEnd().split('\n');
    const good = JSON.parse(lines[0]!) as Record<string, unknown>;
    const file = write('run/rollouts/step_3/train/all/traces.jsonl', [
      lines[0]!,
      JSON.stringify({ ...good, reward: 'high' }),
      '{"example_id": 3, "prompt": [',
      JSON.stringify({ ...good, completion: [{ content: 'no role' }] }),
      JSON.stringify({ ...good, metrics: { correct_answer: 'yes' } }),
      lines[1]!,
    ]);
    const items = await readAll(file);
    assert.deepEqual(items.map((i) => `${isBad(i) ? 'bad' : 'ok'}@${i.at.line}`), ['ok@1', 'bad@2', 'bad@3', 'bad@4', 'bad@5', 'ok@6']);
    const reasons = items.filter(isBad).map((i) => i.error.reason);
    assert.equal(reasons[0], 'reward: expected a number or null, got a string');
    assert.match(reasons[1]!, /^not valid JSON: /);
    assert.equal(reasons[2], 'completion[0]: expected a chat message {role, content}, got an object');
    assert.equal(reasons[3], 'metrics.correct_answer: expected a number, got a string');
    const bad = items[1];
    assert.ok(bad && isBad(bad) && bad.error instanceof ImportError);
    assert.equal(bad.error.line, 2);
    assert.equal(bad.error.file, file);
    assert.equal(bad.at.endOffset, offsetAfter(file, 2));
  });

  it('resumes after a record from its endOffset', async () => {
    const all = await readAll(fixture);
    const rest = await readAll(fixture, { startOffset: all[1]!.at.endOffset, startLine: 3 });
    assert.deepEqual(rest.map((i) => i.at.line), [3, 4]);
    assert.deepEqual(rest, all.slice(2));
  });

  it('reads eval traces as val, and the older {train,eval}_rollouts.jsonl files', async () => {
    const line = readFileSync(fixture, 'utf8').split('\n')[0]!;
    const [evalItem] = await readAll(write('out/rollouts/step_8/eval/effective/traces.jsonl', [line]));
    assert.ok(evalItem && !isBad(evalItem));
    assert.equal(evalItem.record.split, 'val');
    assert.equal(evalItem.record.step, 8);
    const [older] = await readAll(write('out/rollouts/step_9/eval_rollouts.jsonl', [line]));
    assert.ok(older && !isBad(older));
    assert.equal(older.record.split, 'val');
    assert.equal(older.record.step, 9);
  });

  it('derives the group from step, env and example_id when a record has no group_id', async () => {
    const good = JSON.parse(readFileSync(fixture, 'utf8').split('\n')[0]!) as Record<string, unknown>;
    delete good['group_id'];
    const [item] = await readAll(write('o/rollouts/step_3/train/all/traces.jsonl', [JSON.stringify(good)]));
    assert.ok(item && !isBad(item));
    assert.equal(item.record.groupId, '3:train:gsm8k:17');
  });

  it('reads a verifiers v1 Trace record: message graph, weighted rewards, group and task key', async () => {
    const trace = {
      version: 1,
      id: 'f00d',
      verifiers: { version: '0.2.0', commit: null },
      task: { type: 'SweTask', data: { answer: 'ok', repo: 'toy' }, key: 'toy-1', hash: 'h1' },
      agent: { config: { id: 'default' }, runtime: null, name: 'solver', trainable: true },
      tools: [],
      nodes: [
        { parent: null, message: { role: 'system', content: 'sys' }, sampled: false },
        { parent: 0, message: { role: 'user', content: 'fix it' }, sampled: false },
        { parent: 1, message: { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'execute_bash', arguments: '{"command": "ls -la"}' }] }, sampled: true },
        { parent: 2, message: { role: 'tool', tool_call_id: 'c1', content: 'a.py\nb.py' }, sampled: false },
        { parent: 3, message: { role: 'assistant', content: '', tool_calls: [{ id: 'c2', name: 'submit', arguments: {} }] }, sampled: true },
      ],
      calls: [{ node: 2, usage: { input_tokens: 100, completion_tokens: 12, total_tokens: 112 } }, { node: 4, usage: { input_tokens: 130, completion_tokens: 5, total_tokens: 135 } }],
      rewards: { tests: { score: 1, weight: 1 }, format: { score: 0.5, weight: 0.2 }, judge: null },
      metrics: { num_tool_calls: 2 },
      info: { k: 'v' },
      root_reply: null,
      is_completed: true,
      ok: true,
      stop_condition: 'submitted',
      errors: [],
      kind: 'eval',
      env_name: 'swe-toy',
      group_id: 'g-9',
      policy_version: 4,
      eval_step: 6,
      advantage: 0.5,
    };
    const file = write('o/rollouts/step_6/eval/effective/traces.jsonl', [JSON.stringify(trace)]);
    assert.equal(primeRlImporter.matches(file, JSON.stringify(trace).slice(0, 100)), true);
    const [item] = await readAll(file);
    assert.deepEqual(item, {
      record: {
        step: 6,
        split: 'val',
        promptId: 'toy-1',
        groupId: 'g-9',
        prompt: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'fix it' }],
        response: trace.nodes.slice(2).map((n) => n.message),
        groundTruth: 'ok',
        reward: 1.1,
        rewardComponents: { tests: 1, format: 0.5, num_tool_calls: 2 },
        correct: null,
        extractedAnswer: null,
        advantage: 0.5,
        stopReason: 'submitted',
        responseTokens: 17,
        numTurns: 2,
        errors: [],
        timingMs: null,
        dataSource: 'swe-toy',
        envClass: null,
        extra: { version: 1, id: 'f00d', verifiers: trace.verifiers, task: trace.task, info: { k: 'v' }, root_reply: null, is_completed: true, ok: true, kind: 'eval', policy_version: 4, eval_step: 6 },
        steps: [
          { ...step, role: 'assistant', actionKind: 'search', command: 'ls -la', observationBytes: null },
          { ...step, role: 'tool', actionKind: 'observation', command: null, observationBytes: 9 },
          { ...step, role: 'assistant', actionKind: 'submit', command: 'submit', observationBytes: null },
        ],
      },
      at: { file, line: 1, endOffset: Buffer.byteLength(JSON.stringify(trace)) + 1 },
    });
  });

  it('matches the rollouts layout of trace files and not another format', () => {
    const head = readFileSync(fixture, 'utf8').slice(0, 100);
    assert.equal(primeRlImporter.matches(fixture, head), true);
    assert.equal(primeRlImporter.matches('C:\\out\\rollouts\\step_12\\eval\\effective\\traces.jsonl', head), true);
    assert.equal(primeRlImporter.matches('/out/rollouts/step_12/train_rollouts.jsonl', head), true);
    // Another format's file, at its own path and at a prime-rl path.
    const skyHead = readFileSync(skyrlFixture, 'utf8').slice(0, 100);
    assert.equal(primeRlImporter.matches(skyrlFixture, skyHead), false);
    assert.equal(primeRlImporter.matches('/out/rollouts/step_12/train/all/traces.jsonl', 'PAR1\u0000'), false);
    // A traces.jsonl not laid out as prime-rl writes it.
    assert.equal(primeRlImporter.matches('/out/traces/traces.jsonl', head), false);
    assert.equal(primeRlImporter.matches('/out/rollouts/step_12/train/traces.jsonl', head), false);
  });
});
