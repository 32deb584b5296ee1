import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { requireSharedData, sweDir } from '../helpers/data';
import { repoRoot, tempDir } from '../helpers/tmp';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

const bin = path.join(repoRoot, 'bin', 'evotrainer.js');

describe('evotrainer health / diagnose in a harness (built CLI)', () => {
  const harness = tempDir('evotrainer-health-cli-');
  const cli = (args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: harness });
  before(() => {
    writeFileSync(path.join(harness, 'evotrainer.yaml'), 'name: h\ndomain: swe\n');
    assert.equal(cli(['import', path.join(sweDir, 'trajs'), '--run', 'swe']).status, 0);
  });

  it("the manifest's thresholds override the catalog's defaults", () => {
    const turns = () => (JSON.parse(cli(['health', '--json']).stdout) as { metrics: { name: string; status: string }[] }).metrics.find((m) => m.name === 'turns')!.status;
    assert.equal(turns(), 'ok', 'the default: warn above 50 turns (the SWE mean is 40.7)');
    writeFileSync(path.join(harness, 'evotrainer.yaml'), 'name: h\ndomain: swe\nthresholds:\n  turns: { warning: 30 }\n');
    assert.equal(turns(), 'warning');
  });

  it('runs the harness\'s script metrics (harness code) only with --trust; without, each is reported with its file and how to allow it', () => {
    const metrics = path.join(harness, 'diagnostics', 'metrics');
    mkdirSync(metrics, { recursive: true });
    // its value can only come from running it
    writeFileSync(path.join(metrics, 'ran_here.py'), '# description: shows that harness code ran\nimport json, sys\nsys.stdin.read()\nprint(json.dumps({"value": 7}))\n');
    const ran = (stdout: string) => /ran_here\s+7\.000|"name": "ran_here"/.test(stdout);
    try {
      for (const cmd of [['health'], ['health', '--json'], ['diagnose'], ['diagnose', '--json']]) {
        const r = cli(cmd);
        assert.equal(r.status, 0, r.stderr);
        assert.equal(ran(r.stdout), false, `\`evotrainer ${cmd.join(' ')}\` ran harness code without --trust`);
        assert.match(r.stdout, /ran_here\.py: a script metric runs harness code on this machine: pass --trust to run it/, cmd.join(' '));
      }
      const r = cli(['health', '--json', '--trust']);
      assert.equal(r.status, 0, r.stderr);
      const health = JSON.parse(r.stdout) as { metrics: { name: string; value: number | null }[]; problems: string[] };
      assert.equal(health.metrics.find((m) => m.name === 'ran_here')?.value, 7, 'with --trust the script runs');
      assert.deepEqual(health.problems, []);
      assert.ok(ran(cli(['health', '--trust']).stdout), 'health --trust (text)');
    } finally {
      rmSync(path.join(harness, 'diagnostics'), { recursive: true, force: true });
    }
  });

  it('diagnose prints findings and failure modes, text and JSON; the gate\'s leak threshold is the LEAK rule\'s', () => {
    // The honest runs' 0.7% git-history share is below the gate's leak threshold (5%): a LEAK warning, not critical.
    const honest = JSON.parse(cli(['diagnose', '--json']).stdout) as { findings: { rule: string; severity: string; suggestion: string }[] };
    assert.deepEqual(honest.findings.map((f) => [f.rule, f.severity]), [['LEAK', 'warning']]);
    assert.match(honest.findings[0]!.suggestion, /^0\.7% of trajectories ran git log\/show\/blame\/reflog — below the share at which the gate rejects a version/);
    writeFileSync(path.join(harness, 'evotrainer.yaml'), 'name: h\ndomain: swe\ngate:\n  leak: { max: 0 }\n');
    const text = cli(['diagnose']);
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /\[CRITICAL\] LEAK/);
    assert.match(text.stdout, /format_error_loop\s+74/);
    const json = JSON.parse(cli(['diagnose', '--json']).stdout) as { findings: { rule: string }[]; failureModes: { failure_mode: string; n: number }[] };
    assert.deepEqual(json.findings.map((f) => f.rule), ['LEAK']);
    assert.equal(json.failureModes.reduce((a, m) => a + m.n, 0), 303);
  });

  it('a run, version or step range with no rollouts fails with what the store has, for health, diagnose and metric', () => {
    for (const args of [['health', '--run', 'nosuchrun'], ['diagnose', '--version', 'v9'], ['metric', 'validate', 'turns', '--run', 'nosuchrun', '--steps', '3:4']]) {
      const r = cli(args);
      assert.equal(r.status, 1, `${args.join(' ')}: ${r.stdout}`);
      assert.match(r.stderr, /^evotrainer \w+: no rollouts in (run "nosuchrun"|version "v9").*The store has run\(s\) swe \(303\): pick one with --run\/--version/);
      assert.equal(r.stdout, '');
    }
  });

  it('a reader that stops early (`rollouts show 42 | head -1`) ends the command quietly, exit 0, no EPIPE', () => {
    // A real shell pipe into a real `head`, which exits after one line of the 139 kB.
    const rc = path.join(harness, 'show.rc');
    const r = spawnSync('sh', ['-c', '{ "$0" "$1" rollouts show 42; echo $? > "$2"; } | head -1', process.execPath, bin, rc], { cwd: harness, encoding: 'utf8' });
    assert.equal(r.stdout, 'rollout 42  run swe  mini-swe-agent  step 0  val\n');
    assert.equal(r.stderr, '');
    assert.equal(readFileSync(rc, 'utf8').trim(), '0');
  });
});
