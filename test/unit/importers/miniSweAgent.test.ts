import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { miniSweAgentImporter } from '../../../src/core/store/importers/miniSweAgent';
import { requireSharedData, sweDir } from '../../helpers/data';
import { readAll } from '../../helpers/importers';
import { tempDir } from '../../helpers/tmp';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

describe('mini-swe-agent importer (real trajectories)', () => {
  const file = path.join(sweDir, 'trajs', 'astropy__astropy-12907.traj.json');

  it('pins the fields of a real resolved trajectory and its SWE-bench verdict', async () => {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { messages: { role: string; content: string }[]; info: { submission: string } };
    const { good, bad } = await readAll(miniSweAgentImporter, file);
    assert.equal(bad.length, 0);
    const r = good[0]!.record;
    assert.equal(r.promptId, 'astropy__astropy-12907');
    assert.equal(r.correct, true);
    assert.equal(r.reward, 1);
    assert.equal(r.stopReason, 'Submitted');
    assert.equal(r.extractedAnswer, doc.info.submission);
    assert.deepEqual(r.extra, {
      instance_id: 'astropy__astropy-12907',
      trajectory_format: 'mini-swe-agent-1',
      verdict: 'resolved',
      verdict_file: path.join(sweDir, 'reports', 'astropy__astropy-12907.report.json'),
      patch_applied: true,
      tests: { f2p_success: 2, f2p_failure: 0, p2p_success: 13, p2p_failure: 0 },
      patch_submitted: true,
      instance_cost: 0.23051419999999997,
      api_calls: 20,
      mini_version: '1.15.0',
    });
    assert.equal(r.steps!.length, doc.messages.length, 'one step per message');
    assert.equal(r.numTurns, doc.messages.filter((m) => m.role === 'assistant').length);
    assert.deepEqual((r.prompt as unknown[]).length, 2);
    assert.deepEqual(r.steps![2], { role: 'assistant', actionKind: 'search', command: 'ls -R', exitCode: null, observationBytes: null, formatError: false, timeout: false, truncated: false, tokens: 106 });
    assert.equal(r.steps![3]!.role, 'user');
    assert.equal(r.steps![3]!.actionKind, 'observation');
    assert.equal(r.steps![3]!.exitCode, 0);
    assert.equal(r.steps![3]!.truncated, true, 'the ls -R output was cut by the harness');
    assert.equal(r.steps![3]!.observationBytes, Buffer.byteLength(doc.messages[3]!.content));
  });

  it('flags format errors and timeouts from the harness feedback', async () => {
    const dir = tempDir();
    const f = path.join(dir, 'x__y-1.traj.json');
    writeFileSync(f, JSON.stringify({
      instance_id: 'x__y-1', trajectory_format: 'mini-swe-agent-1', info: { exit_status: 'LimitsExceeded' },
      messages: [
        { role: 'system', content: 'sys' }, { role: 'user', content: 'task' },
        { role: 'assistant', content: 'no command here' },
        { role: 'user', content: 'Please always provide EXACTLY ONE action in triple backticks, found 0 actions.' },
        { role: 'assistant', content: 'THOUGHT\n```bash\npython reproduce.py\n```' },
        { role: 'user', content: 'The last command <command>python reproduce.py</command> timed out and has been killed.' },
        { role: 'assistant', content: '```bash\nsed -i s/a/b/ f.py\n```' },
        { role: 'user', content: '<returncode>2</returncode>\n<output>\nsed: no such file</output>' },
      ],
    }));
    const { good } = await readAll(miniSweAgentImporter, f);
    const s = good[0]!.record.steps!;
    assert.equal(good[0]!.record.correct, null, 'no report beside it: no verdict');
    assert.equal(s[2]!.formatError, true);
    assert.equal(s[3]!.formatError, true);
    assert.equal(s[4]!.actionKind, 'test');
    assert.equal(s[5]!.timeout, true);
    assert.equal(s[6]!.actionKind, 'edit');
    assert.equal(s[7]!.exitCode, 2);
  });

  it('reports an unreadable trajectory as one bad record', async () => {
    const dir = tempDir();
    const f = path.join(dir, 'bad.traj.json');
    writeFileSync(f, '{"messages": [{"role": "user"');
    const { good, bad } = await readAll(miniSweAgentImporter, f);
    assert.equal(good.length, 0);
    assert.match(bad[0]!.error.message, /bad\.traj\.json:1: not a valid JSON document/);
    writeFileSync(f, '{"messages": [{"role": "user", "content": 3}]}');
    assert.match((await readAll(miniSweAgentImporter, f)).bad[0]!.error.reason, /messages\[0\] must have a string "role" and a "content" \(text, null or a list of parts\)/);
  });

  it('recognizes .traj.json only', () => {
    assert.equal(miniSweAgentImporter.matches('/a/trajs/x.traj.json', '{\n  "info": {'), true);
    assert.equal(miniSweAgentImporter.matches('/a/x.traj', '{"trajectory": []}'), false);
  });
});
