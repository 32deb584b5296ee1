import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ImportError } from '../../src/core/store/rows';
import { withStore } from '../helpers/store';
import { repoRoot, tempDir } from '../helpers/tmp';

const bin = path.join(repoRoot, 'bin', 'evotrainer.js');
const MiB = 1024 * 1024;
const EMPTY = { runs: 0, rollouts: 0, steps: 0, groups: 0, imports: 0, quarantined: 0 };

/** A dump folder: one small real-shaped mini-swe-agent trajectory, and two sparse 300 MiB documents (a SWE-agent .traj and a .traj.json) whose first bytes look like theirs. */
function dumps(root: string): { dir: string; small: string; bigTraj: string; bigJson: string } {
  const dir = path.join(root, 'trajs');
  mkdirSync(dir, { recursive: true });
  const small = path.join(dir, 'small__repo-1.traj.json');
  writeFileSync(small, JSON.stringify({ instance_id: 'small__repo-1', trajectory_format: 'mini-swe-agent-1', info: { exit_status: 'Submitted', submission: '' }, messages: [{ role: 'system', content: 'You fix bugs.' }, { role: 'user', content: 'Fix it.' }, { role: 'assistant', content: 'THOUGHT: done\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```' }] }));
  const bigTraj = path.join(dir, 'huge__repo-2.traj');
  writeFileSync(bigTraj, '{"trajectory": [{"action": "ls", "observation": "');
  truncateSync(bigTraj, 300 * MiB); // sparse: no 300 MiB is written
  const bigJson = path.join(dir, 'huge__repo-3.traj.json');
  writeFileSync(bigJson, '{"messages": [{"role": "user", "content": "');
  truncateSync(bigJson, 300 * MiB);
  return { dir, small, bigTraj, bigJson };
}

describe('files read whole have a size limit (sparse 300 MiB trajectories)', () => {
  const root = tempDir('evotrainer-docsize-');
  const { dir, small, bigTraj, bigJson } = dumps(root);

  it('fails naming the file, its size, the limit and how to raise it; the store is unchanged', async () => {
    await withStore(path.join(root, 'fail.duckdb'), async (s) => {
      await assert.rejects(s.import([dir]), (err: Error) => {
        assert.ok(err instanceof ImportError, err.message);
        assert.ok(err.message.startsWith(`${bigTraj}: 300 MiB (314572800 bytes), over the 256 MiB limit on a file read whole`), err.message);
        assert.match(err.message, /--max-document-size 301M \(or EVOTRAINER_MAX_DOCUMENT_SIZE=301M\)/);
        assert.match(err.message, /--on-error skip or quarantine/);
        return true;
      });
      assert.deepEqual(await s.counts(), EMPTY, 'nothing landed, the small trajectory neither');
    });
  });

  it('--on-error skip sets both aside, imports the rest, and does not count them again on a re-import', async () => {
    await withStore(path.join(root, 'skip.duckdb'), async (s) => {
      const r = await s.import([dir], { onError: 'skip' });
      assert.equal(r.rollouts, 1);
      assert.equal(r.badRecords, 2);
      assert.deepEqual(r.files.filter((f) => f.setAside).map((f) => f.file).sort(), [bigTraj, bigJson].sort());
      assert.match(r.files.find((f) => f.file === bigJson)!.setAside!, /^300 MiB \(314572800 bytes\), over the 256 MiB limit/);
      const again = await s.import([dir], { onError: 'skip' });
      assert.deepEqual([again.rollouts, again.badRecords, again.files.map((f) => f.status)], [0, 0, ['unchanged', 'unchanged', 'unchanged']]);
      assert.deepEqual(await s.counts(), { runs: 1, rollouts: 1, steps: 3, groups: 1, imports: 3, quarantined: 0 });
    });
  });

  it('--on-error quarantine keeps the reason in the quarantine table, once', async () => {
    await withStore(path.join(root, 'quarantine.duckdb'), async (s) => {
      await s.import([dir], { onError: 'quarantine' });
      await s.import([dir], { onError: 'quarantine' });
      const rows = await s.all<{ file: string; line: number | null; reason: string }>(`select path as file, line, reason from quarantine order by path`);
      assert.deepEqual(rows.map((q) => [q.file, q.line]), [[bigTraj, null], [bigJson, null]].sort());
      for (const q of rows) assert.match(q.reason, /over the 256 MiB limit on a file read whole/);
      assert.equal((await s.counts()).quarantined, 2);
    });
  });

  it('a file set aside under a low limit is imported once the limit allows it; a limit too low for a real trajectory says so', async () => {
    await withStore(path.join(root, 'raise.duckdb'), async (s) => {
      const low = await s.import([small], { onError: 'skip', maxDocumentBytes: 100 });
      assert.deepEqual([low.rollouts, low.badRecords], [0, 1]);
      assert.match(low.files[0]!.setAside!, /bytes\), over the 100 bytes limit/);
      const raised = await s.import([small], { onError: 'skip' });
      assert.deepEqual([raised.rollouts, raised.badRecords, raised.files[0]!.status], [1, 0, 'imported']);
    });
  });

  it('the CLI: --max-document-size and EVOTRAINER_MAX_DOCUMENT_SIZE set the limit, a bad size is refused, a set-aside file is listed', () => {
    const store = path.join(root, 'cli.duckdb');
    const cli = (args: string[], env: Record<string, string> = {}) => spawnSync(process.execPath, [bin, 'import', ...args, '--store', store], { encoding: 'utf8', cwd: root, env: { ...process.env, ...env } });
    const bad = cli([small, '--max-document-size', 'lots']);
    assert.equal(bad.status, 2, bad.stderr);
    assert.match(bad.stderr, /--max-document-size: "lots" is not a size; write bytes or a number with K, M, G or T/);
    const envLow = cli([small], { EVOTRAINER_MAX_DOCUMENT_SIZE: '100' });
    assert.equal(envLow.status, 1);
    assert.match(envLow.stderr, /small__repo-1\.traj\.json: \d+ bytes \(\d+ bytes\), over the 100 bytes limit/);
    const skipped = cli([dir, '--on-error', 'skip']);
    assert.equal(skipped.status, 0, skipped.stderr);
    assert.match(skipped.stdout, /Imported 1 rollouts/);
    assert.match(skipped.stdout, /huge__repo-2\.traj: set aside: 300 MiB \(314572800 bytes\), over the 256 MiB limit/);
    const raised = cli([bigJson, '--max-document-size', '1G', '--on-error', 'skip']);
    assert.equal(raised.status, 0, raised.stderr);
    assert.match(raised.stdout, /1 malformed record\(s\) skipped/, 'under 1G the file is read (and is not JSON)');
  });

  it('a SWE-bench run summary over the limit is refused before it is read', () => {
    const summary = path.join(root, 'big-summary.json');
    writeFileSync(summary, '{"resolved_ids": [');
    truncateSync(summary, 300 * MiB);
    const r = spawnSync(process.execPath, [bin, 'import', small, '--verdicts', summary, '--store', path.join(root, 'verdicts.duckdb')], { encoding: 'utf8', cwd: root });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /big-summary\.json: 300 MiB \(314572800 bytes\), over the 256 MiB limit/);
  });
});
