import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { RolloutStore } from '../../src/core/store/store';
import { externalDir, fixtures, requireSharedData } from '../helpers/data';
import { repoRoot, tempDir } from '../helpers/tmp';

requireSharedData();

/** Excerpts of real dumps vendored with the tests (see its README for sources and licences). */
const realFixtures = path.join(fixtures, 'real');

/**
 * Third-party rollout files, imported as a user would, checked against the numbers a user
 * would check, which test/helpers/realFacts.py reads straight from the raw files with plain
 * Python json (no importer code): rollout counts, groups, mean reward, turns, tool calls,
 * tokens, exit statuses, and that every key of a record lands somewhere in the row.
 */

type SweFact = { file: string; instance: string; has_trajectory: boolean; turns: number | null; exit_status: string | null; tokens_received: number | null; api_calls: number | null; timeouts: number | null; patch: boolean };
type VerifiersRow = { example: number; reward: number; assistant_turns: number; tool_calls: number; tool_messages: number; keys: string[] };
type VerifiersFacts = { rollouts: number; groups: number; mean_reward: number; dead_groups: number; rows: VerifiersRow[] };
type VerlRow = { step: number; prompt: string; response: string; ground_truth: string; reward: number; correct: boolean; extracted_answer: string; reward_components: Record<string, number>; extra: Record<string, unknown> };
type Facts = {
  verl_hecate: { reward: number; assistant_turns: number; tool_results: number; request_id: string }[];
  verl_sdpo_metrics: { step: number; metric: string; value: number }[];
  verl_sdpo: { rollouts: number; groups: number; mean_score: number; correct: number; rows: VerlRow[] };
  swe_agent: SweFact[];
  verifiers: Record<'math_python' | 'wordle', VerifiersFacts>;
  mini_swe_agent: { assistant_messages: number; tool_calls: number; tool_messages: number; exit_status: string; api_calls: number };
};

function rawFacts(): Facts {
  const r = spawnSync('python3', [path.join(repoRoot, 'test', 'helpers', 'realFacts.py'), externalDir, realFixtures], { encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Facts;
}

/** Every key of an object, at any depth (what "kept in extra" means for nested timing/info). */
function deepKeys(v: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(v)) for (const x of v) deepKeys(x, into);
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      into.add(k);
      deepKeys(x, into);
    }
  }
  return into;
}

const sortRows = <T>(rows: T[]) => rows.map((r) => JSON.stringify(r)).sort();

describe('importers on real third-party files: numbers match the raw files', () => {
  let store: RolloutStore;
  let facts: Facts;
  const sweDirs = () => {
    const demos = path.join(externalDir, 'swe-agent', 'demos');
    return [path.join(externalDir, 'swe-agent', 'testdata'), ...readdirSync(demos).map((d) => path.join(demos, d))];
  };

  before(async () => {
    facts = rawFacts();
    store = await RolloutStore.open(':memory:');
    await store.import(sweDirs(), { run: 'swe' });
    await store.import([path.join(externalDir, 'verifiers', 'math_python')], { run: 'math_python' });
    await store.import([path.join(externalDir, 'verifiers', 'wordle')], { run: 'wordle' });
    await store.import([path.join(externalDir, 'mini-swe-agent-v2')], { run: 'mini' });
  });
  after(() => store.close());

  it('verl (SDPO run, trainer.rollout_data_dir): rollouts, groups, mean score, accuracy and every reward_extra_info key, on both import paths', async () => {
    const f = facts.verl_sdpo;
    const dir = path.join(realFixtures, 'verl-sdpo');
    const cols = `step, split, prompt, response, ground_truth, reward, correct, extracted_answer, reward_components, extra, group_id, sample_index`;
    const read = async (bulk: boolean) => {
      const s = await RolloutStore.open(':memory:');
      try {
        const r = await s.import([dir], { run: 'sdpo', bulk });
        assert.deepEqual(r.files.map((x) => [x.format, x.reader, x.rollouts, x.badRecords]), [['verl', bulk ? 'duckdb' : 'stream', f.rollouts, 0]]);
        return await s.all<Record<string, unknown>>(`select ${cols} from rollouts order by id`);
      } finally {
        s.close();
      }
    };
    const viaBulk = await read(true);
    const viaStream = await read(false);
    const parsed = (rows: Record<string, unknown>[]) =>
      rows.map((r): Record<string, unknown> => ({ ...r, reward_components: JSON.parse((r.reward_components as string | null) ?? '{}'), extra: JSON.parse((r.extra as string | null) ?? '{}') }));
    assert.deepEqual(parsed(viaBulk), parsed(viaStream), 'the bulk (DuckDB) and streaming paths store the same rows');
    const rows = parsed(viaBulk);
    assert.equal(rows.length, f.rollouts);
    assert.equal(new Set(rows.map((r) => r.group_id)).size, f.groups, 'verl writes no group id: one group per (step, prompt)');
    assert.equal(rows.reduce((a, r) => a + (r.reward as number), 0) / rows.length, f.mean_score);
    assert.equal(rows.filter((r) => r.correct === true).length, f.correct);
    assert.deepEqual(
      rows.map(({ step, prompt, response, ground_truth, reward, correct, extracted_answer, reward_components, extra }) => ({ step, prompt, response, ground_truth, reward, correct, extracted_answer, reward_components, extra })),
      f.rows,
      'each line: text verbatim, score, acc, pred, and the reward function\'s own keys (numbers as components, text in extra)',
    );
    assert.ok(rows.every((r) => r.split === 'train'));
  });

  it('verl multi-turn dump decoded without special tokens (sglang tool agent): turns and tool results per rollout, on both paths', async () => {
    const f = facts.verl_hecate;
    assert.deepEqual(f.map((r) => r.tool_results), [1, 1, 0, 1, 1, 1], 'the raw lines: five tool round trips, one plain answer');
    const read = async (bulk: boolean) => {
      const s = await RolloutStore.open(':memory:');
      try {
        const r = await s.import([path.join(realFixtures, 'verl-hecate')], { run: 'h', bulk });
        assert.deepEqual(r.files.map((x) => [x.format, x.reader, x.rollouts, x.badRecords]), [['verl', 'stream', 6, 0]], 'a multi-turn dump is streamed (its transcripts become steps)');
        return await s.all<{ reward: number; assistant_turns: number; tool_results: number; request_id: string }>(
          `select r.reward, r.num_turns as assistant_turns, count(s.turn) filter (where s.role = 'tool')::int as tool_results, r.extra::json->>'request_id' as request_id
           from rollouts r left join steps s on s.rollout_id = r.id group by r.id, r.reward, r.num_turns, r.extra order by r.id`,
        );
      } finally {
        s.close();
      }
    };
    assert.deepEqual(await read(true), f);
    assert.deepEqual(await read(false), f);
  });

  it("verl's file logger (SDPO ARC run): every metric of the logged step, value for value", async () => {
    const expected = facts.verl_sdpo_metrics;
    assert.equal(expected.length, 108, 'the raw line logs 108 numbers at step 1');
    const s = await RolloutStore.open(':memory:');
    try {
      const r = await s.import([path.join(realFixtures, 'verl-sdpo-arc')], { run: 'arc' });
      assert.equal(r.rollouts, 0);
      assert.deepEqual(r.ignored, [], 'a metrics file is not reported as an unknown dump');
      assert.deepEqual(r.curves!.files.map((f) => [f.format, f.points]), [['verl-file', 108]]);
      const rows = await s.all<{ step: number; metric: string; value: number }>(`select step, metric, value from metrics where run_id = 'arc'`);
      const byName = (a: { metric: string }, b: { metric: string }) => a.metric.localeCompare(b.metric);
      assert.deepEqual(rows.sort(byName), [...expected].sort(byName));
    } finally {
      s.close();
    }
  });

  it('verl: the split comes from the folder verl wrote the dump to, not from a parent folder that happens to hold "val"', async () => {
    const root = path.join(tempDir(), 'evaluation-runs', 'grpo');
    const lines = readFileSync(path.join(realFixtures, 'verl-sdpo', 'rollouts', '1.jsonl'), 'utf8').split('\n');
    mkdirSync(path.join(root, 'rollouts'), { recursive: true });
    mkdirSync(path.join(root, 'validation_data'), { recursive: true });
    writeFileSync(path.join(root, 'rollouts', '1.jsonl'), lines.slice(0, 5).join('\n') + '\n');
    writeFileSync(path.join(root, 'validation_data', '1.jsonl'), lines.slice(0, 3).join('\n') + '\n');
    for (const bulk of [true, false]) {
      const s = await RolloutStore.open(':memory:');
      try {
        await s.import([root], { run: 'r', bulk });
        assert.deepEqual(await s.all(`select split, count(*)::int as n from rollouts group by 1 order by 1`), [{ split: 'train', n: 5 }, { split: 'val', n: 3 }], `bulk: ${bulk}`);
      } finally {
        s.close();
      }
    }
  });

  it('verl: a byte-identical copy of a dump in the same import is counted once, on both paths', async () => {
    const root = tempDir();
    for (const sub of ['run/rollouts', 'run-copy/rollouts']) {
      mkdirSync(path.join(root, sub), { recursive: true });
      copyFileSync(path.join(realFixtures, 'verl-sdpo', 'rollouts', '1.jsonl'), path.join(root, sub, '1.jsonl'));
    }
    for (const bulk of [true, false]) {
      const s = await RolloutStore.open(':memory:');
      try {
        const r = await s.import([root], { run: 'r', bulk });
        assert.deepEqual(r.files.map((f) => f.status).sort(), ['imported', 'unchanged'], `bulk: ${bulk}`);
        assert.deepEqual(await s.all(`select count(*)::int as n from rollouts`), [{ n: 5 }], `bulk: ${bulk}`);
      } finally {
        s.close();
      }
    }
  });

  it('SWE-agent: one rollout per trajectory file, with its turns, exit status, timeouts and patch', async () => {
    const withTrajectory = facts.swe_agent.filter((f) => f.has_trajectory);
    assert.equal(withTrajectory.length, 21, 'the raw files: 21 of 22 .traj files hold a trajectory');
    const rows = await store.all<{ prompt_id: string; num_turns: number; stop_reason: string; patch: boolean; assistant: number; tool: number; timeouts: number }>(
      `select r.prompt_id, r.num_turns, r.stop_reason, (r.extra::json->>'patch_submitted')::boolean as patch,
              count(*) filter (where s.role = 'assistant')::int as assistant, count(*) filter (where s.role = 'tool')::int as tool,
              count(*) filter (where s.timeout)::int as timeouts
       from rollouts r join steps s on s.rollout_id = r.id where r.run_id = 'swe' group by r.id, r.prompt_id, r.num_turns, r.stop_reason, r.extra`,
    );
    assert.deepEqual(
      sortRows(rows),
      sortRows(withTrajectory.map((f) => ({ prompt_id: f.instance, num_turns: f.turns, stop_reason: f.exit_status, patch: f.patch, assistant: f.turns, tool: f.turns, timeouts: f.timeouts }))),
    );
  });

  it('SWE-agent: tokens come from model_stats where the run counted them; demonstrations and replays (0 tokens over a trajectory) are not measured, not 0', async () => {
    const rows = await store.all<{ prompt_id: string; num_turns: number; response_tokens: number | null; api_calls: number | null }>(
      `select prompt_id, num_turns, response_tokens, (extra::json->'model_stats'->>'api_calls')::int as api_calls from rollouts where run_id = 'swe'`,
    );
    const expected = facts.swe_agent
      .filter((f) => f.has_trajectory)
      .map((f) => ({ prompt_id: f.instance, num_turns: f.turns, response_tokens: f.tokens_received ? f.tokens_received : null, api_calls: f.api_calls }));
    assert.deepEqual(sortRows(rows), sortRows(expected));
    const measured = expected.filter((e) => e.response_tokens !== null).map((e) => e.response_tokens);
    assert.deepEqual(measured.sort(), [1369, 243, 326], 'the three SWE-agent test trajectories counted their tokens');
    const { mean } = (await store.all<{ mean: number }>(`select avg(response_tokens) as mean from rollouts where run_id = 'swe'`))[0]!;
    assert.equal(mean, (243 + 1369 + 326) / 3, 'a mean over the runs that counted tokens, not diluted by demonstrations');
  });

  it('SWE-agent: the one .traj without a trajectory is reported, not silently dropped', async () => {
    const noTrajectory = facts.swe_agent.filter((f) => !f.has_trajectory).map((f) => f.file);
    assert.deepEqual(noTrajectory, ['swe-agent/demos/trajectories_demonstrations/function_calling_simple.traj']);
    const file = path.join(externalDir, noTrajectory[0]!);
    const s = await RolloutStore.open(':memory:');
    try {
      const r = await s.import([path.dirname(file)], { run: 'x' });
      assert.equal(r.rollouts, 0);
      assert.deepEqual(r.ignored?.map((i) => i.file), [file], 'a folder import lists the file it could not read');
      assert.match(r.ignored![0]!.reason, /not in a known dump format .*pass --format/);
      await assert.rejects(s.import([file], { run: 'y' }), /function_calling_simple\.traj: not a recognized rollout dump .*pass --format/);
    } finally {
      s.close();
    }
  });

  for (const env of ['math_python', 'wordle'] as const) {
    it(`verifiers ${env}: rollouts, groups, mean reward, dead groups, turns and tool calls as in results.jsonl`, async () => {
      const f = facts.verifiers[env];
      const agg = (await store.all<{ n: number; groups: number; mean: number }>(
        `select count(*)::int as n, count(distinct group_id)::int as groups, avg(reward) as mean from rollouts where run_id = ?`,
        [env],
      ))[0]!;
      assert.equal(agg.n, f.rollouts);
      assert.equal(agg.groups, f.groups);
      assert.ok(Math.abs(agg.mean - f.mean_reward) < 1e-12, `${agg.mean} vs ${f.mean_reward}`);
      const dead = await store.all<{ n: number }>(
        `select count(*)::int as n from (select group_id from rollouts where run_id = ? group by 1 having count(distinct reward) = 1)`,
        [env],
      );
      assert.equal(dead[0]!.n, f.dead_groups);
      const rows = await store.all<{ example: number; reward: number; assistant_turns: number; tool_calls: number; tool_messages: number }>(
        `select r.prompt_id::int as example, r.reward, r.num_turns as assistant_turns,
                count(*) filter (where s.role = 'assistant' and s.action_kind <> 'message')::int as tool_calls,
                count(*) filter (where s.role = 'tool')::int as tool_messages
         from rollouts r left join steps s on s.rollout_id = r.id where r.run_id = ? group by r.id, r.prompt_id, r.reward, r.num_turns`,
        [env],
      );
      assert.deepEqual(sortRows(rows), sortRows(f.rows.map(({ keys: _keys, ...r }) => r)));
    });

    it(`verifiers ${env}: every key of a record is kept (a column, the reward components or extra)`, async () => {
      const mapped = new Set(['prompt', 'completion', 'reward', 'answer', 'example_id']);
      const rows = await store.all<{ reward_components: string | null; extra: string | null }>(`select reward_components, extra from rollouts where run_id = ?`, [env]);
      const kept = deepKeys(rows.map((r) => [JSON.parse(r.reward_components ?? '{}'), JSON.parse(r.extra ?? '{}')]));
      const rawKeys = new Set(facts.verifiers[env].rows.flatMap((r) => r.keys));
      const lost = [...rawKeys].filter((k) => !mapped.has(k) && !kept.has(k));
      assert.deepEqual(lost, []);
    });
  }

  it('mini-swe-agent 2.x: tool calls, observations and exit status as in the .traj.json', async () => {
    const m = facts.mini_swe_agent;
    const r = (await store.all<{ stop_reason: string; calls: number; observations: number }>(
      `select r.stop_reason, count(*) filter (where s.role = 'assistant' and s.action_kind not in ('message', 'other'))::int as calls,
              count(*) filter (where s.role = 'tool')::int as observations
       from rollouts r join steps s on s.rollout_id = r.id where r.run_id = 'mini' group by all`,
    ))[0]!;
    assert.equal(r.stop_reason, m.exit_status);
    assert.equal(r.calls, m.tool_calls);
    assert.equal(r.observations, m.tool_messages);
    assert.equal(m.api_calls, m.assistant_messages, 'one model call per assistant message');
  });
});
