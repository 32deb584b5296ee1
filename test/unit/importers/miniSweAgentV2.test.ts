import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { miniSweAgentImporter } from '../../../src/core/store/importers/miniSweAgent';
import { externalDir, requireSharedData } from '../../helpers/data';
import { readAll } from '../../helpers/importers';
import { tempDir } from '../../helpers/tmp';

requireSharedData();

const REAL = path.join(externalDir, 'mini-swe-agent-v2', 'astropy__astropy-12907.traj.json');

async function record(file: string, verdicts?: string) {
  const { good, bad } = await readAll(miniSweAgentImporter, file, verdicts ? { verdicts } : {});
  assert.deepEqual(bad.map((b) => b.error.message), []);
  return good[0]!.record;
}

describe('mini-swe-agent 2.x importer (tool calling, trajectory_format mini-swe-agent-1.1)', () => {
  it('reads the real 2.3 trajectory: one tool call per turn, tool observations, no format errors', async () => {
    // Figures counted from the file with a python3 one-off: 130 messages (system, task,
    // 64 assistant, 63 tool, 1 exit); 64 actions in extra.actions; 17133 completion tokens;
    // 15 observations with a non-zero returncode; no FormatError, no <exception>, no <warning>.
    const r = await record(REAL);
    const s = r.steps!;
    assert.equal(r.promptId, 'astropy__astropy-12907');
    assert.equal(r.numTurns, 64);
    assert.equal(s.length, 130);
    const assistant = s.filter((x) => x.role === 'assistant');
    assert.equal(assistant.length, 64);
    assert.equal(assistant.filter((x) => x.command !== null).length, 64, 'every turn carries its tool call');
    assert.equal(s.filter((x) => x.formatError).length, 0);
    assert.equal(s.filter((x) => x.role === 'tool').length, 63);
    assert.equal(s.filter((x) => x.exitCode !== null && x.exitCode !== 0).length, 15);
    assert.equal(s.filter((x) => x.exitCode === 0).length, 48);
    assert.equal(s.filter((x) => x.timeout || x.truncated).length, 0);
    assert.equal(r.responseTokens, 17133);
    assert.equal(r.stopReason, 'Submitted');
    assert.equal(s.at(-1)!.role, 'system', 'the exit message closes the run');
    // The fix is a sed -i on separable.py, and the final submission is a patch.
    assert.ok(assistant.some((x) => x.actionKind === 'edit' && /sed -i .*separable\.py/.test(x.command!)));
    assert.equal(assistant.at(-1)!.actionKind, 'submit');
    assert.equal(r.extra!.patch_submitted, true);
    assert.equal(r.extra!.trajectory_format, 'mini-swe-agent-1.1');
    assert.equal(r.extra!.mini_version, '2.3.0');
    // No report or run summary beside it: the outcome is unknown, not a failure.
    assert.equal(r.correct, null);
    assert.equal(r.reward, null);
    assert.equal(r.extra!.verdict, null);
  });

  it('reads tool_calls when extra.actions is absent, a dropped turn answered by a FormatError, and a timed-out command', async () => {
    // Shaped after mini-swe-agent 2.x's own writers: actions_toolcall.py (FormatError user
    // message with extra.interrupt_type), the environments' exception_info for a timeout.
    const dir = tempDir();
    const f = path.join(dir, 'x__y-1.traj.json');
    const call = (id: string, command: string) => ({ id, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } });
    writeFileSync(f, JSON.stringify({
      trajectory_format: 'mini-swe-agent-1.1', instance_id: 'x__y-1', info: { exit_status: 'LimitsExceeded', submission: '' },
      messages: [
        { role: 'system', content: 'sys' }, { role: 'user', content: 'task' },
        { role: 'user', content: 'Tool call error:\n\n<error>\nNo tool calls found in the response.\n</error>', extra: { interrupt_type: 'FormatError' } },
        { role: 'assistant', content: null, tool_calls: [call('a', 'grep -rn foo src'), call('b', "cat > src/fix.py <<'EOF'\nx = 1\nEOF")] },
        { role: 'tool', tool_call_id: 'a', content: '<returncode>0</returncode>\n<output>\nsrc/a.py:1:foo\n</output>', extra: { returncode: 0 } },
        { role: 'tool', tool_call_id: 'b', content: '<returncode>0</returncode>\n<output>\n</output>' },
        { role: 'assistant', content: '', tool_calls: [call('c', 'python -m pytest -q')] },
        { role: 'tool', tool_call_id: 'c', content: "<exception>An error occurred while executing the command: Command 'python -m pytest -q' timed out after 60 seconds</exception>\n<returncode>-1</returncode>\n<output>\n</output>", extra: { returncode: -1, exception_info: "An error occurred while executing the command: Command 'python -m pytest -q' timed out after 60 seconds" } },
        { role: 'exit', content: '', extra: { exit_status: 'LimitsExceeded', submission: '' } },
      ],
    }));
    const r = await record(f);
    assert.deepEqual(r.steps!.map((x) => [x.role, x.actionKind, x.formatError, x.timeout, x.exitCode]), [
      ['system', 'message', false, false, null],
      ['user', 'message', false, false, null],
      ['assistant', 'other', true, false, null],
      ['user', 'observation', true, false, null],
      ['assistant', 'search', false, false, null],
      ['assistant', 'edit', false, false, null],
      ['tool', 'observation', false, false, 0],
      ['tool', 'observation', false, false, 0],
      ['assistant', 'test', false, false, null],
      ['tool', 'observation', false, true, -1],
      ['system', 'other', false, false, null],
    ]);
    assert.equal(r.numTurns, 3, 'the dropped turn, then two answered ones');
    assert.equal(r.extra!.patch_submitted, false);
  });

  it('takes verdicts from a run summary in the dump folder, its parent, or --verdicts; unknown and errored stay apart from failed', async () => {
    // The dump layout of mini-swe-agent 2.x swebench runs: <out>/<id>/<id>.traj.json.
    const out = tempDir();
    const inst = path.join(out, 'astropy__astropy-12907');
    mkdirSync(inst);
    const traj = path.join(inst, 'astropy__astropy-12907.traj.json');
    copyFileSync(REAL, traj);
    assert.equal((await record(traj)).correct, null);

    // swebench.harness make_run_report: <model>.<run_id>.json in the dump folder.
    const summary = (lists: Record<string, string[]>) => JSON.stringify({ total_instances: 3, submitted_instances: 3, completed_instances: 2, resolved_instances: 1, unresolved_instances: 1, empty_patch_instances: 0, error_instances: 1, completed_ids: [], incomplete_ids: [], empty_patch_ids: [], submitted_ids: [], resolved_ids: [], unresolved_ids: [], error_ids: [], schema_version: 2, ...lists });
    writeFileSync(path.join(out, 'deepseek__deepseek-chat.run1.json'), summary({ resolved_ids: ['other-1'], unresolved_ids: ['astropy__astropy-12907'] }));
    let r = await record(traj);
    assert.equal(r.correct, false);
    assert.equal(r.reward, 0);
    assert.equal(r.extra!.verdict, 'unresolved');
    assert.equal(r.extra!.verdict_file, path.join(out, 'deepseek__deepseek-chat.run1.json'));

    writeFileSync(path.join(out, 'deepseek__deepseek-chat.run1.json'), summary({ resolved_ids: ['other-1'], error_ids: ['astropy__astropy-12907'] }));
    r = await record(traj);
    assert.equal(r.correct, null, 'an evaluation error is not a failure');
    assert.equal(r.reward, null);
    assert.equal(r.extra!.verdict, 'error');
    assert.match(r.errors![0]!, /SWE-bench evaluation errored/);

    writeFileSync(path.join(out, 'deepseek__deepseek-chat.run1.json'), summary({ resolved_ids: ['other-1'] }));
    assert.equal((await record(traj)).correct, null, 'an instance in no list stays unknown');

    // sb-cli get-report: sb-cli-reports/<subset>__<split>__<run_id>.json.
    mkdirSync(path.join(out, 'sb-cli-reports'));
    writeFileSync(path.join(out, 'sb-cli-reports', 'swe-bench_verified__test__run1.json'), summary({ resolved_ids: ['astropy__astropy-12907'] }));
    assert.equal((await record(traj)).correct, true);

    // Given explicitly: it wins over what lies beside the files.
    const elsewhere = path.join(tempDir(), 'results.json');
    writeFileSync(elsewhere, JSON.stringify({ resolved_ids: [], unresolved_ids: ['astropy__astropy-12907'] }));
    r = await record(traj, elsewhere);
    assert.equal(r.correct, false);
    assert.equal(r.extra!.verdict_file, elsewhere);

    writeFileSync(elsewhere, '[1, 2]');
    const { bad } = await readAll(miniSweAgentImporter, traj, { verdicts: elsewhere });
    assert.match(bad[0]!.error.message, /SWE-bench verdicts could not be read .*results\.json: not a SWE-bench run summary/);
    assert.equal(readFileSync(traj, 'utf8'), readFileSync(REAL, 'utf8'));
  });
});
