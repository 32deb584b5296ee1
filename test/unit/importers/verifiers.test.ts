import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { discover } from '../../../src/core/store/importers';
import { verifiersImporter } from '../../../src/core/store/importers/verifiers';
import { externalDir, requireSharedData } from '../../helpers/data';
import { readAll } from '../../helpers/importers';
import { tempDir } from '../../helpers/tmp';

requireSharedData();

const MATH = path.join(externalDir, 'verifiers', 'math_python', 'results.jsonl');
const WORDLE = path.join(externalDir, 'verifiers', 'wordle', 'results.jsonl');

async function records(file: string) {
  const { good, bad } = await readAll(verifiersImporter, file);
  assert.deepEqual(bad.map((b) => b.error.message), []);
  return good.map((g) => g.record);
}

describe('verifiers importer (real vf-eval outputs)', () => {
  it('detects results.jsonl beside metadata.json as verifiers, and the env names the domain', async () => {
    for (const f of [MATH, WORDLE]) assert.deepEqual((await discover([f])).files.map((x) => x.importer.format), ['verifiers']);
    assert.equal(verifiersImporter.domainOf!(MATH), 'math');
    assert.equal(verifiersImporter.domainOf!(WORDLE), 'other');
  });

  it('math_python (group key "id", tool_calls as JSON strings): rollouts, groups, tool calls and metadata', async () => {
    // Counted with a python3 one-off: 15 lines, 5 ids of 3 rollouts, 45 assistant messages
    // holding 30 tool_calls (each a JSON string) answered by 30 tool messages; reward sum 14.
    const rs = await records(MATH);
    assert.equal(rs.length, 15);
    assert.deepEqual([...new Set(rs.map((r) => r.groupId))].sort(), ['0:val:math-python:0', '0:val:math-python:1', '0:val:math-python:2', '0:val:math-python:3', '0:val:math-python:4']);
    const steps = rs.flatMap((r) => r.steps ?? []);
    const calls = steps.filter((s) => s.role === 'assistant' && s.command !== null);
    assert.equal(calls.length, 30, 'no tool call lost');
    assert.ok(calls.every((s) => s.command!.startsWith('python {"code":')));
    assert.equal(steps.filter((s) => s.role === 'tool').length, 30);
    assert.equal(steps.filter((s) => s.role === 'assistant').length, 45);
    assert.equal(rs.reduce((a, r) => a + r.reward!, 0), 14);
    assert.deepEqual(rs[0]!.rewardComponents, { total_tool_calls: 2, python_calls: 2, correct_answer_reward_func: 1 });
    assert.equal(rs[0]!.dataSource, 'math-python');
    assert.equal(rs[0]!.split, 'val');
    assert.equal(rs[0]!.extra!.model, 'gpt-4.1-mini');
    assert.deepEqual(rs[0]!.extra!.sampling_args, { max_tokens: null });
    assert.equal('oai_tools' in (rs[0]!.extra!.info as object), false, 'the tool schemas are not kept per rollout');
    assert.equal(rs[0]!.correct, null, 'vf-eval records a reward, not a binary verdict');
  });

  it('wordle (group key "example_id", multi-turn without tools): 15 rollouts in 5 groups, 56 model turns', async () => {
    const rs = await records(WORDLE);
    assert.equal(rs.length, 15);
    assert.equal(new Set(rs.map((r) => r.groupId)).size, 5);
    assert.equal(rs.reduce((a, r) => a + r.numTurns!, 0), 56);
    assert.ok(Math.abs(rs.reduce((a, r) => a + r.reward!, 0) - 20.709524) < 1e-6);
    assert.equal(rs[0]!.extra!.model, 'gpt-5-mini');
    assert.deepEqual(Object.keys(rs[0]!.rewardComponents!).sort(), ['check_answer_reward_func', 'count_turns_reward_func', 'format_reward_func', 'partial_credit_reward_func']);
  });

  it('reads a hosted-RL export: fields as JSON text, problem_id / sample_id groups, advantage and step', async () => {
    // No public export file was found; the shape (as the issue describes it) is applied to
    // the real math_python lines: prompt, completion and metrics stored as JSON strings.
    const dir = tempDir();
    const file = path.join(dir, 'rollouts.jsonl');
    const lines = readFileSync(MATH, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    writeFileSync(file, lines.map((l, i) => JSON.stringify({
      problem_id: `p${l.id as number}`, sample_id: i % 3, step: 7, advantage: (l.reward as number) - 0.5,
      prompt: JSON.stringify(l.prompt), completion: JSON.stringify(l.completion), reward: l.reward,
      metrics: JSON.stringify({ correct_answer_reward_func: l.correct_answer_reward_func }),
    })).join('\n') + '\n');
    assert.deepEqual((await discover([file])).files.map((x) => x.importer.format), ['verifiers']);
    const rs = await records(file);
    assert.equal(rs.length, 15);
    assert.equal(new Set(rs.map((r) => r.groupId)).size, 5);
    assert.ok(rs.every((r) => r.step === 7 && r.split === 'train' && typeof r.advantage === 'number'));
    assert.equal(rs[0]!.promptId, 'p0');
    assert.equal(rs.flatMap((r) => r.steps ?? []).filter((s) => s.role === 'assistant' && s.command !== null).length, 30);
    assert.deepEqual(rs[0]!.rewardComponents, { correct_answer_reward_func: 1 });
  });

  it('a broken metadata.json fails the file with where and what to do; a bad line is one bad record', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'results.jsonl');
    writeFileSync(file, readFileSync(MATH, 'utf8').split('\n')[0] + '\n["not", "an object"]\n');
    writeFileSync(path.join(dir, 'metadata.json'), '{"env": ');
    await assert.rejects(readAll(verifiersImporter, file), /metadata\.json: not valid JSON .*fix or remove it to import results\.jsonl/);
    writeFileSync(path.join(dir, 'metadata.json'), '{"env": "math-python"}');
    const { good, bad } = await readAll(verifiersImporter, file);
    assert.equal(good.length, 1);
    assert.match(bad[0]!.error.message, /results\.jsonl:2: expected a JSON object per line, got a list/);
  });
});
