import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ImportError, isBad, type ImportedRecord, type ImporterItem, type RolloutRecord } from '../../../src/core/store/rows';
import { pythonTaskHash, rllmImporter } from '../../../src/core/store/importers/rllm';
import type { ReadOptions } from '../../../src/core/store/importers/types';
import { repoRoot, tempDir } from '../../helpers/tmp';

const dir = path.join(repoRoot, 'test/fixtures/importers/rllm/episodes/train_step_5_epoch_0');
const CORRECT = path.join(dir, 'episode_hash3e6a2c77_id9b2f6c1e-4d1a-4c5e-8f0a-2b7d3e5a1c44_0.json');
const WRONG = path.join(dir, 'episode_hash3e6a2c77_id9b2f6c1e-4d1a-4c5e-8f0a-2b7d3e5a1c44_1.json');
const SOLVER_JUDGE = path.join(dir, 'episode_hash10c0c743_idd41c0e7a-88b3-4f62-9a15-6c0b2e9f7d10_0.json');
const SUMMARY = path.join(dir, 'batch_summary.json');
const opts: ReadOptions = { tables: { readParquet: () => { throw new Error('not a parquet importer'); } } };

async function readAll(file: string, o: ReadOptions = opts): Promise<ImporterItem[]> {
  const out: ImporterItem[] = [];
  for await (const item of rllmImporter.read(file, o)) out.push(item);
  return out;
}

async function records(file: string, o: ReadOptions = opts): Promise<ImportedRecord[]> {
  const items = await readAll(file, o);
  assert.ok(items.every((i) => !isBad(i)), JSON.stringify(items.filter(isBad).map((i) => i.error.message)));
  return items as ImportedRecord[];
}

const head = (file: string) => readFileSync(file, 'utf8').slice(0, 4096);
const raw = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as { trajectories: { steps: { observation: unknown }[] }[] };

const SYSTEM = 'You are a programming agent. Call exactly one function per turn.';
const USER = 'Consider the following task:\n<task>\nHow many lines of logs/app.log contain ERROR? Finish with the number.\n</task>';
const step = (over: Partial<NonNullable<RolloutRecord['steps']>[number]>) => ({
  role: 'assistant' as const,
  actionKind: 'other' as const,
  command: null,
  exitCode: null,
  observationBytes: null,
  formatError: false,
  timeout: false,
  truncated: false,
  tokens: null,
  ...over,
});

describe('rLLM importer', () => {
  it('recognizes EpisodeLogger files by their directory, and nothing else', () => {
    for (const f of [CORRECT, WRONG, SOLVER_JUDGE]) assert.equal(rllmImporter.matches(f, head(f)), true, f);
    assert.equal(rllmImporter.matches(SUMMARY, head(SUMMARY)), false, 'batch_summary.json is not an episode');
    // Outside the layout, by the keys EpisodeLogger writes first.
    assert.equal(rllmImporter.matches('/dump/ep.json', head(CORRECT)), true);
    assert.equal(rllmImporter.matches('/dump/ep.json', '{"prompt": "x", "response": "y"}'), false);
    // Other formats' files.
    const mini = '/runs/swebench/astropy__astropy-12907/astropy__astropy-12907.traj.json';
    assert.equal(rllmImporter.matches(mini, '{"info": {"exit_status": "Submitted"}, "messages": [], "trajectory_format": "mini-swe-agent-1"}'), false);
    const swe = path.join(repoRoot, 'test/fixtures/importers/swe-agent/acme__widgets-42.traj');
    assert.equal(rllmImporter.matches(swe, head(swe)), false);
    assert.equal(rllmImporter.matches('/runs/rollouts/step_3/train/all/rollouts.jsonl', '{"prompt": [], "completion": []}'), false);
    assert.equal(rllmImporter.followable, false);
    assert.equal(rllmImporter.format, 'rllm');
  });

  it('reads a multi-step shell episode field by field', async () => {
    const items = await records(CORRECT);
    assert.equal(items.length, 1);
    const turn0 = 'Let me count them with grep.\n<function=execute_bash>\n  <parameter=command>grep -c ERROR logs/app.log</parameter>\n</function>';
    const turn1 = 'grep reports 3 matching lines.\n<function=finish>\n  <parameter=command>submit</parameter>\n  <parameter=result>3</parameter>\n</function>';
    const expected: RolloutRecord = {
      step: 5,
      split: 'train',
      promptId: 'shell-count-errors-007',
      groupId: '9b2f6c1e-4d1a-4c5e-8f0a-2b7d3e5a1c44:default_traj_name_0',
      prompt: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: USER },
      ],
      response: [
        { role: 'assistant', content: turn0 },
        { role: 'user', content: '3' },
        { role: 'assistant', content: turn1 },
      ],
      groundTruth: '3',
      reward: 1,
      correct: true,
      extractedAnswer: null,
      advantage: null,
      stopReason: 'env_done',
      responseTokens: null,
      numTurns: 2,
      errors: [],
      timingMs: 1750,
      dataSource: 'toy_shell',
      extra: {
        episode_id: '9b2f6c1e-4d1a-4c5e-8f0a-2b7d3e5a1c44:0',
        trajectory_name: 'default_traj_name',
        trajectory_uid: '5a0c9e2b-7f31-4b8e-a6d4-0f1e2c3b4a59',
        epoch: 0,
        metrics: { default_traj_name_acc: 1 },
      },
      steps: [
        step({ role: 'user', actionKind: 'message', observationBytes: 113 }),
        step({ actionKind: 'search', command: 'grep -c ERROR logs/app.log' }),
        step({ role: 'tool', actionKind: 'observation', observationBytes: 1 }),
        step({ actionKind: 'submit', command: 'finish' }),
      ],
    };
    assert.deepEqual(items[0], { record: expected, at: { file: CORRECT, record: 1 } });
    assert.equal(Buffer.byteLength(USER, 'utf8'), 113);
  });

  it('keeps a wrong rollout of the same task in the same group, its markup verbatim', async () => {
    const [right] = await records(CORRECT);
    const [wrong] = await records(WRONG);
    const r = wrong!.record;
    assert.equal(r.promptId, right!.record.promptId);
    assert.equal(r.groupId, right!.record.groupId);
    assert.equal(r.correct, false);
    assert.equal(r.reward, 0);
    assert.equal(r.numTurns, 1);
    assert.equal(
      r.response,
      'The log shows the line <script>alert(1)</script> twice, so the answer is 2.\n<function=finish>\n  <parameter=command>submit</parameter>\n  <parameter=result>2</parameter>\n</function>',
    );
    assert.equal(r.timingMs, 640);
    assert.deepEqual(r.steps, [step({ role: 'user', actionKind: 'message', observationBytes: 113 }), step({ actionKind: 'submit', command: 'finish' })]);
  });

  it('gives one record per trajectory of a multi-agent episode, grouped by trajectory name', async () => {
    const items = await records(SOLVER_JUDGE);
    assert.deepEqual(
      items.map((i) => [i.at.record, i.record.groupId, i.record.extra?.trajectory_name, i.record.reward, i.record.correct, i.record.response]),
      [
        [1, 'd41c0e7a-88b3-4f62-9a15-6c0b2e9f7d10:solver', 'solver', 1, true, '17 * 20 = 340 and 17 * 3 = 51, so \\boxed{391}.'],
        [2, 'd41c0e7a-88b3-4f62-9a15-6c0b2e9f7d10:judge', 'judge', 1, true, '<verdict>correct</verdict>'],
      ],
    );
    // No id field in the task: the prompt id is rLLM's own task hash, which we can recompute.
    const task = { question: 'What is 17 * 23?', ground_truth: '391', data_source: 'toy_math' };
    assert.equal(items[0]!.record.promptId, '10c0c743');
    assert.equal(pythonTaskHash(task), '10c0c743');
    assert.deepEqual(items[0]!.record.prompt, [{ role: 'user', content: 'What is 17 * 23?' }]);
    assert.deepEqual(items[0]!.record.steps, [step({ actionKind: 'message' })]);
    assert.equal(items[0]!.record.groundTruth, '391');
    assert.equal(items[0]!.record.dataSource, 'toy_math');
    assert.equal(items[0]!.record.timingMs, null);
  });

  it('has one assistant step per trajectory step, and numTurns equal to the trajectory length', async () => {
    for (const file of [CORRECT, WRONG, SOLVER_JUDGE]) {
      const trajs = raw(file).trajectories;
      const items = await records(file);
      assert.equal(items.length, trajs.length);
      items.forEach((item, t) => {
        const n = trajs[t]!.steps.length;
        assert.equal(item.record.numTurns, n);
        assert.equal(item.record.steps!.filter((s) => s.role === 'assistant').length, n);
        const observations = trajs[t]!.steps.filter((s) => s.observation !== null && s.observation !== '').length;
        assert.equal(item.record.steps!.length, n + observations);
      });
    }
  });

  it('yields nothing for the batch summary that sits beside the episodes', async () => {
    assert.deepEqual(await readAll(SUMMARY), []);
  });

  it('turns a broken file into one bad record naming what is wrong', async () => {
    const tmp = tempDir();
    const stepDir = path.join(tmp, 'episodes', 'train_step_1_epoch_0');
    mkdirSync(stepDir, { recursive: true });

    const truncated = path.join(stepDir, 'truncated.json');
    // A trailing comma, as a hand edit leaves it: JSON.parse names the position, hence the line.
    writeFileSync(truncated, '{\n  "training_step": 1,\n  "episode_id": "a:0",\n  "trajectories": [\n    {"steps": [], }\n  ]\n}\n');
    const [badJson, ...rest] = await readAll(truncated);
    assert.equal(rest.length, 0);
    assert.ok(badJson && isBad(badJson));
    assert.ok(badJson.error instanceof ImportError);
    assert.match(badJson.error.reason, /^not valid JSON/);
    assert.equal(badJson.error.line, 5, 'the line JSON.parse stopped at');
    assert.deepEqual(badJson.at, { file: truncated, line: 5 });

    const noTrajectories = path.join(stepDir, 'no-trajectories.json');
    writeFileSync(noTrajectories, JSON.stringify({ training_step: 1, episode_id: 'a:0', task: {}, is_correct: false }));
    const [missing] = await readAll(noTrajectories);
    assert.ok(missing && isBad(missing));
    assert.equal(missing.error.reason, 'rLLM episode: missing field "trajectories"');
    assert.equal(missing.error.line, 1);

    const noSteps = path.join(stepDir, 'no-steps.json');
    writeFileSync(noSteps, JSON.stringify({ episode_id: 'a:0', task: {}, is_correct: true, trajectories: [{ name: 'solver', reward: 1 }] }));
    const [stepsMissing] = await readAll(noSteps);
    assert.ok(stepsMissing && isBad(stepsMissing));
    assert.equal(stepsMissing.error.reason, 'rLLM episode: trajectories[0] missing field "steps"');

    const noId = path.join(stepDir, 'no-id.json');
    writeFileSync(noId, JSON.stringify({ task: {}, is_correct: true, trajectories: [] }));
    const [idMissing] = await readAll(noId);
    assert.ok(idMissing && isBad(idMissing));
    assert.equal(idMissing.error.reason, 'rLLM episode: missing field "episode_id"');

    await assert.rejects(readAll(path.join(stepDir, 'absent.json')), (err: unknown) => err instanceof ImportError && /cannot read/.test(err.reason));
  });

  it("reads Episode.to_dict() output: step from the val directory, tokens, tool calls, format errors, hash of the task", async () => {
    const tmp = tempDir();
    const valDir = path.join(tmp, 'episodes', 'val_step_2_epoch_1');
    mkdirSync(valDir, { recursive: true });
    const task = { problem: 'List the files, then say done.', answer: 'done', extra: 'é' };
    const s = (over: Record<string, unknown>) => ({
      prompt_ids: [1, 2], response_ids: [], logprobs: [], chat_completions: [], observation: null, thought: '', action: null,
      model_response: '', model_output: null, info: {}, reward: 0, done: false, mc_return: 0, advantage: null, weight_version: null, ...over,
    });
    const episode = {
      id: 'task:with:colons:3',
      task,
      termination_reason: 'max_response_length_exceeded',
      is_correct: false,
      trajectories: [
        {
          uid: 'u1',
          name: 'default_traj_name',
          task,
          reward: null,
          info: { timing: { total_time: 2.5 } },
          steps: [
            s({ observation: 'List the files, then say done.', response_ids: [5, 6, 7], model_response: 'calling ls', action: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command": "ls -la"}' } }] }),
            s({ observation: 'ERROR: command timed out after 30s', response_ids: [8, 9], model_response: '<function=>\n</function>', action: '<function=>\n</function>' }),
            s({ observation: { tool_outputs: { c2: 'a.txt' } }, response_ids: [10], model_response: 'done', action: 'done', reward: 0.25 }),
          ],
        },
      ],
      metrics: {},
      info: { error: { error_message: 'boom', error_type: 'RuntimeError' } },
    };
    const file = path.join(valDir, 'ep.json');
    writeFileSync(file, JSON.stringify(episode));
    const [item] = await records(file, { ...opts, split: 'train' });
    const r = item!.record;
    assert.equal(r.step, 2);
    assert.equal(r.split, 'val', 'the directory says val, whatever --split says');
    assert.equal(r.groupId, 'task:with:colons:default_traj_name_0');
    assert.equal(r.promptId, pythonTaskHash(task));
    assert.equal(r.reward, 0.25, 'no trajectory reward: the last step reward, as rLLM propagates it');
    assert.equal(r.groundTruth, 'done');
    assert.equal(r.responseTokens, 6);
    assert.equal(r.timingMs, 2500);
    assert.equal(r.stopReason, 'max_response_length_exceeded');
    assert.deepEqual(r.errors, ['boom']);
    assert.equal(r.prompt, 'List the files, then say done.');
    assert.deepEqual(r.response, [
      { role: 'assistant', content: 'calling ls' },
      { role: 'user', content: 'ERROR: command timed out after 30s' },
      { role: 'assistant', content: '<function=>\n</function>' },
      { role: 'user', content: '{"tool_outputs":{"c2":"a.txt"}}' },
      { role: 'assistant', content: 'done' },
    ]);
    assert.deepEqual(r.steps, [
      step({ role: 'user', actionKind: 'message', observationBytes: 30 }),
      step({ actionKind: 'search', command: 'ls -la', tokens: 3 }),
      step({ role: 'tool', actionKind: 'observation', observationBytes: 34, timeout: true }),
      step({ actionKind: 'other', formatError: true, tokens: 2 }),
      step({ role: 'tool', actionKind: 'observation', observationBytes: 31 }),
      step({ actionKind: 'message', tokens: 1, truncated: true }),
    ]);
  });

  it('reads a NaN that Python wrote into an episode', async () => {
    const tmp = tempDir();
    const stepDir = path.join(tmp, 'episodes', 'train_step_9_epoch_0');
    mkdirSync(stepDir, { recursive: true });
    const file = path.join(stepDir, 'nan.json');
    writeFileSync(file, '{"episode_id": "t:0", "task": {"id": 7}, "is_correct": false, "termination_reason": "error", "metrics": {"x_acc": NaN},\n "trajectories": [{"name": "x", "reward": NaN, "steps": []}]}\n');
    const [item] = await records(file);
    assert.equal(item!.record.promptId, '7');
    assert.equal(item!.record.reward, null);
    assert.deepEqual(item!.record.extra?.metrics, { x_acc: null });
    assert.equal(item!.record.step, 9);
  });
});
