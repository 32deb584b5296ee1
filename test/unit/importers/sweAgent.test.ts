import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ImportError, isBad, type ImportedRecord, type ImporterItem, type RolloutRecord } from '../../../src/core/store/rows';
import { actionKind, sweAgentImporter } from '../../../src/core/store/importers/sweAgent';
import type { ReadOptions } from '../../../src/core/store/importers/types';
import { repoRoot, tempDir } from '../../helpers/tmp';

const TRAJ = path.join(repoRoot, 'test/fixtures/importers/swe-agent/acme__widgets-42.traj');
const opts: ReadOptions = { tables: { readParquet: () => { throw new Error('not a parquet importer'); } } };

async function readAll(file: string, o: ReadOptions = opts): Promise<ImporterItem[]> {
  const out: ImporterItem[] = [];
  for await (const item of sweAgentImporter.read(file, o)) out.push(item);
  return out;
}

async function one(file: string, o: ReadOptions = opts): Promise<ImportedRecord> {
  const items = await readAll(file, o);
  assert.equal(items.length, 1);
  const [item] = items;
  assert.ok(item && !isBad(item), item && isBad(item) ? item.error.message : 'no item');
  return item;
}

type Doc = { trajectory: { action: string; observation: string }[]; history: { role: string; content: string }[]; info: { submission: string } };
const doc = JSON.parse(readFileSync(TRAJ, 'utf8')) as Doc;
const head = (file: string) => readFileSync(file, 'utf8').slice(0, 4096);

const assistant = (actionKind: string, command: string | null, formatError = false) => ({
  role: 'assistant', actionKind, command, exitCode: null, observationBytes: null, formatError, timeout: false, truncated: false, tokens: null,
});
const tool = (observationBytes: number | null, timeout = false, truncated = false) => ({
  role: 'tool', actionKind: 'observation', command: null, exitCode: null, observationBytes, formatError: false, timeout, truncated, tokens: null,
});

describe('SWE-agent importer', () => {
  it('recognizes <instance_id>.traj files, not mini-swe-agent .traj.json or other dumps', () => {
    assert.equal(sweAgentImporter.matches(TRAJ, head(TRAJ)), true);
    assert.equal(sweAgentImporter.matches('/runs/x/django__django-11099/django__django-11099.traj', '{\n  "trajectory": [\n'), true);
    const mini = '/runs/swebench/astropy__astropy-12907/astropy__astropy-12907.traj.json';
    assert.equal(sweAgentImporter.matches(mini, '{"trajectory_format": "mini-swe-agent-1", "messages": [{"role": "system"}]}'), false);
    assert.equal(sweAgentImporter.matches(mini, head(TRAJ)), false, 'a .traj.json is never ours, whatever it holds');
    assert.equal(sweAgentImporter.matches('/runs/x/notes.traj', '{"something": "else"}'), false);
    const rllm = path.join(repoRoot, 'test/fixtures/importers/rllm/episodes/train_step_5_epoch_0/episode_hash3e6a2c77_id9b2f6c1e-4d1a-4c5e-8f0a-2b7d3e5a1c44_0.json');
    assert.equal(sweAgentImporter.matches(rllm, head(rllm)), false);
    assert.equal(sweAgentImporter.followable, false);
    assert.equal(sweAgentImporter.format, 'swe-agent');
  });

  it('reads a trajectory field by field', async () => {
    const item = await one(TRAJ);
    const expected: RolloutRecord = {
      step: 0,
      split: 'val',
      promptId: 'acme__widgets-42',
      prompt: [
        { role: 'system', content: doc.history[0]!.content },
        { role: 'user', content: doc.history[1]!.content },
      ],
      response: doc.info.submission,
      groundTruth: null,
      reward: null,
      rewardComponents: {},
      correct: null,
      extractedAnswer: null,
      advantage: null,
      stopReason: 'submitted',
      responseTokens: 612,
      numTurns: 6,
      errors: [],
      timingMs: null,
      dataSource: null,
      envClass: 'swe-agent',
      extra: {
        instance_id: 'acme__widgets-42',
        environment: 'swe_main',
        model_stats: { total_cost: 0, instance_cost: 0.0412, tokens_sent: 18234, tokens_received: 612, api_calls: 6 },
        patch_submitted: true,
      },
      steps: [
        assistant('search', 'search_dir "def parse_date"'),
        tool(153),
        assistant('search', 'open widgets/dates.py'),
        tool(221),
        assistant('edit', 'edit 7:7\n    return datetime.strptime(value.rstrip("Z"), "%Y-%m-%dT%H:%M:%S")\nend_of_edit'),
        tool(386),
        assistant('test', 'python -m pytest tests/test_dates.py -q'),
        tool(116, true),
        assistant('test', 'python -m pytest tests/test_dates.py -q -k parse_date'),
        tool(111),
        assistant('submit', 'submit'),
        tool(365),
      ] as RolloutRecord['steps'],
    };
    assert.deepEqual(item, { record: expected, at: { file: TRAJ, record: 1 } });
    assert.ok(doc.info.submission.startsWith('diff --git a/widgets/dates.py'));
    assert.match(doc.history[1]!.content, /^We're currently solving the following issue/);
  });

  it('has one assistant and one tool step per trajectory entry, observation bytes as UTF-8', async () => {
    const { record } = await one(TRAJ);
    assert.equal(doc.trajectory.length, 6);
    assert.equal(record.numTurns, doc.trajectory.length);
    assert.equal(record.steps!.length, 2 * doc.trajectory.length);
    assert.equal(record.steps!.filter((s) => s.role === 'assistant').length, doc.trajectory.length);
    const toolSteps = record.steps!.filter((s) => s.role === 'tool');
    assert.deepEqual(toolSteps.map((s) => s.observationBytes), doc.trajectory.map((e) => Buffer.byteLength(e.observation, 'utf8')));
    assert.deepEqual(toolSteps.map((s) => s.timeout), [false, false, false, true, false, false]);
    assert.deepEqual(record.steps!.filter((s) => s.role === 'assistant').map((s) => s.command), doc.trajectory.map((e) => e.action.trim()));
  });

  it('turns a broken file into one bad record naming what is wrong', async () => {
    const tmp = tempDir();
    const truncated = path.join(tmp, 'django__django-1.traj');
    writeFileSync(truncated, '{\n  "environment": "swe_main",\n  "trajectory": [\n    {"action": "ls", },\n');
    const [badJson] = await readAll(truncated);
    assert.ok(badJson && isBad(badJson));
    assert.match(badJson.error.reason, /^not valid JSON/);
    assert.equal(badJson.error.line, 4);

    const noTrajectory = path.join(tmp, 'django__django-2.traj');
    writeFileSync(noTrajectory, JSON.stringify({ environment: 'swe_main', history: [], info: { exit_status: 'submitted' } }));
    const [missing] = await readAll(noTrajectory);
    assert.ok(missing && isBad(missing));
    assert.ok(missing.error instanceof ImportError);
    assert.equal(missing.error.reason, 'SWE-agent trajectory: missing field "trajectory"');
    assert.deepEqual(missing.at, { file: noTrajectory, line: 1 });

    const noAction = path.join(tmp, 'django__django-3.traj');
    writeFileSync(noAction, JSON.stringify({ trajectory: [{ action: 'ls', observation: 'a' }, { observation: 'b' }] }));
    const [actionMissing] = await readAll(noAction);
    assert.ok(actionMissing && isBad(actionMissing));
    assert.equal(actionMissing.error.reason, 'SWE-agent trajectory: trajectory[1] missing field "action"');

    await assert.rejects(readAll(path.join(tmp, 'absent.traj')), (err: unknown) => err instanceof ImportError && /cannot read/.test(err.reason));
  });

  it('reads a 1.x trajectory: format-error requeries, editor tool, cancelled command, prompt from query', async () => {
    const tmp = tempDir();
    const file = path.join(tmp, 'sympy__sympy-20590.traj');
    const query = [
      { role: 'system', content: 'You are a helpful assistant.', agent: 'main', message_type: 'system_prompt' },
      { role: 'user', content: '<uploaded_files>/testbed</uploaded_files> Fix the bug.', agent: 'main', message_type: 'observation' },
    ];
    const cancelled = "The command 'python reproduce.py' was cancelled because it took more than 30 seconds. Please try a different command.";
    const clipped = 'Observation: xxxxx<response clipped><NOTE>Observations should not exceeded 100000 characters. 9000 characters were elided.</NOTE>';
    const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
    const entry = (action: string, observation: string) => ({
      action, observation, response: `thinking\n${action}`, thought: 'thinking', execution_time: 0.4, state: { working_dir: '/testbed', diff: '' }, query, extra_info: {},
    });
    writeFileSync(
      file,
      JSON.stringify({
        trajectory: [
          entry('', ''),
          entry('str_replace_editor view /testbed/sympy/core/basic.py', 'Here is the file…'),
          entry("str_replace_editor str_replace /testbed/sympy/core/basic.py --old_str 'a' --new_str 'b'", 'The file has been edited.'),
          entry('python reproduce.py', cancelled),
          entry('cat big.log', clipped),
        ],
        history: [],
        info: { exit_status: 'exit_format', submission: null, model_stats: { instance_cost: 0.1, tokens_sent: 900, tokens_received: 70, api_calls: 5 }, swe_agent_version: '1.1.0' },
        replay_config: null,
        environment: 'main',
      }),
    );
    const { record } = await one(file, { ...opts, split: 'train' });
    assert.equal(record.split, 'train');
    assert.equal(record.promptId, 'sympy__sympy-20590');
    assert.deepEqual(record.prompt, query.map((m) => ({ role: m.role, content: m.content })));
    assert.equal(record.stopReason, 'exit_format');
    assert.equal(record.responseTokens, 70);
    assert.equal(record.numTurns, 5);
    assert.deepEqual(record.extra, { instance_id: 'sympy__sympy-20590', environment: 'main', model_stats: { instance_cost: 0.1, tokens_sent: 900, tokens_received: 70, api_calls: 5 }, swe_agent_version: '1.1.0', patch_submitted: false });
    // No submission: the turns are the response.
    assert.ok(Array.isArray(record.response));
    assert.equal(record.response.length, 10);
    assert.deepEqual(record.response[7], { role: 'tool', content: cancelled });
    assert.deepEqual(record.steps, [
      assistant('other', null, true),
      tool(0),
      assistant('search', 'str_replace_editor view /testbed/sympy/core/basic.py'),
      tool(19),
      assistant('edit', "str_replace_editor str_replace /testbed/sympy/core/basic.py --old_str 'a' --new_str 'b'"),
      tool(bytes('The file has been edited.')),
      assistant('test', 'python reproduce.py'),
      tool(bytes(cancelled), true),
      assistant('search', 'cat big.log'),
      tool(bytes(clipped), false, true),
    ]);
    assert.equal(bytes('Here is the file…'), 19, 'the ellipsis is three bytes');
  });

  it('takes the verdict from a SWE-bench report beside the trajectory', async () => {
    const perInstance = tempDir();
    const traj = path.join(perInstance, 'acme__widgets-42.traj');
    copyFileSync(TRAJ, traj);
    writeFileSync(
      path.join(perInstance, 'acme__widgets-42.report.json'),
      JSON.stringify({ 'acme__widgets-42': { patch_is_None: false, patch_exists: true, patch_successfully_applied: true, resolved: true, tests_status: {} } }),
    );
    const resolved = (await one(traj)).record;
    assert.equal(resolved.correct, true);
    assert.equal(resolved.reward, 1);
    assert.equal(resolved.extra?.report, path.join(perInstance, 'acme__widgets-42.report.json'));
    assert.equal(resolved.extra?.patch_applied, true);
    assert.equal(resolved.extra?.verdict, 'resolved');

    const runReport = tempDir();
    const traj2 = path.join(runReport, 'acme__widgets-42.traj');
    copyFileSync(TRAJ, traj2);
    writeFileSync(path.join(runReport, 'report.json'), JSON.stringify({ resolved_ids: ['other-1'], unresolved_ids: ['acme__widgets-42'] }));
    const unresolved = (await one(traj2)).record;
    assert.equal(unresolved.correct, false);
    assert.equal(unresolved.reward, 0);
    assert.equal(unresolved.extra?.patch_applied, null);

    const reportsDir = tempDir();
    mkdirSync(path.join(reportsDir, 'trajs'));
    mkdirSync(path.join(reportsDir, 'reports'));
    const traj3 = path.join(reportsDir, 'trajs', 'acme__widgets-42.traj');
    copyFileSync(TRAJ, traj3);
    writeFileSync(path.join(reportsDir, 'reports', 'acme__widgets-42.report.json'), JSON.stringify({ resolved: false }));
    assert.equal((await one(traj3)).record.correct, false);

    const broken = tempDir();
    const traj4 = path.join(broken, 'acme__widgets-42.traj');
    copyFileSync(TRAJ, traj4);
    writeFileSync(path.join(broken, 'report.json'), '{not json');
    const [bad] = await readAll(traj4);
    assert.ok(bad && isBad(bad));
    assert.match(bad.error.reason, /SWE-bench verdicts could not be read \(.*report\.json: not valid JSON/);
  });

  it('classifies SWE-agent ACI commands that a shell classifier would miss', () => {
    assert.deepEqual(
      ['edit 3:4\nfoo\nend_of_edit', 'create reproduce.py', 'insert 5\nx = 1\nend_of_insert', 'goto 120', 'scroll_down', 'str_replace_editor view /a.py', 'str_replace_editor create /b.py --file_text x', 'search_file "foo"', 'find_file "x.py"', 'submit', 'exit_cost', 'ls -la', 'pip install -e .'].map(actionKind),
      ['edit', 'edit', 'edit', 'search', 'search', 'search', 'edit', 'search', 'search', 'submit', 'other', 'search', 'command'],
    );
  });
});
