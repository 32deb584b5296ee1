import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { DoctorReport } from '../../src/core/doctor';
import { repoRoot, tempDir, writeScript } from '../helpers/tmp';

const bin = path.join(repoRoot, 'bin', 'evotrainer.js');
const cli = (args: string[], env: NodeJS.ProcessEnv = process.env) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env, cwd: repoRoot });

describe('evotrainer CLI (built bundle, real processes)', () => {
  it('doctor --json prints a machine-readable report of this machine', () => {
    const r = cli(['doctor', '--json']);
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout) as DoctorReport;
    assert.equal(report.tool, 'evotrainer');
    assert.equal(report.ok, true);
    assert.deepEqual(report.checks.map((c) => c.id), ['git', 'python3', 'ssh', 'sbatch', 'decoders', 'store', 'cluster']);
    assert.equal(report.checks.find((c) => c.id === 'store')!.status, 'ok');
  });

  it('doctor exits 1 and names the fix when a required tool is missing', () => {
    const bin = tempDir();
    writeScript(bin, 'python3', 'echo "Python 3.11.7"');
    const r = cli(['doctor'], { ...process.env, PATH: bin });
    assert.equal(r.status, 1);
    assert.match(r.stdout, /\[MISSING\] git/);
    assert.match(r.stdout, /Not ready/);
  });

  it('doctor --python uses the given interpreter', () => {
    const dir = tempDir();
    const py = writeScript(dir, 'py 3;x', 'echo "Python 3.10.4"');
    const r = cli(['doctor', '--json', '--python', py]);
    const report = JSON.parse(r.stdout) as DoctorReport;
    assert.equal(report.checks.find((c) => c.id === 'python3')!.version, '3.10.4');
  });

  it('rejects unknown commands and options with usage and exit 2', () => {
    let r = cli(['doctr']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /unknown command "doctr"/);
    assert.match(r.stderr, /doctor/);
    r = cli(['doctor', '--jsn']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /unknown option --jsn/);
  });

  it('prints help and version', () => {
    const help = cli(['--help']).stdout;
    assert.match(help, /Usage: evotrainer <command>/);
    for (const c of ['doctor', 'import', 'rollouts', 'health', 'diagnose', 'metric', 'judge', 'labels']) assert.match(help, new RegExp(`\\n  ${c} `), c);
    assert.match(cli(['doctor', '--help']).stdout, /--json/);
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    assert.equal(cli(['--version']).stdout.trim(), pkg.version);
  });
});
