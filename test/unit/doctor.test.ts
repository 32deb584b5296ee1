import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { formatDoctorReport, runDoctor } from '../../src/core/doctor';
import { tempDir, writeScript } from '../helpers/tmp';

const realGit = execFileSync('git', ['--version'], { encoding: 'utf8' }).trim().replace('git version ', '');
const okStore = async () => ({ version: 'v1.5.6', json: true, parquet: true });

describe('doctor', () => {
  it('finds the real git and python3 of this machine, with their versions', async () => {
    const report = await runDoctor({ probeStore: okStore });
    const git = report.checks.find((c) => c.id === 'git')!;
    assert.equal(git.status, 'ok');
    assert.equal(git.version, realGit);
    const py = report.checks.find((c) => c.id === 'python3')!;
    assert.equal(py.status, 'ok');
    assert.match(py.version!, /^3\.\d+\.\d+/);
    assert.deepEqual(
      report.checks.map((c) => c.id),
      ['git', 'python3', 'ssh', 'sbatch', 'decoders', 'store', 'cluster'],
    );
    assert.equal(report.ok, true);
  });

  it('reports a tool missing from PATH with what to install, and fails when it is required', async () => {
    const empty = tempDir();
    const report = await runDoctor({ env: { PATH: empty }, python: 'python3', probeStore: okStore });
    const git = report.checks.find((c) => c.id === 'git')!;
    assert.equal(git.status, 'missing');
    assert.match(git.detail, /not found on PATH/);
    if (existsSync('/etc/debian_version')) assert.match(git.fix!, /apt-get install git/);
    assert.equal(report.checks.find((c) => c.id === 'sbatch')!.status, 'missing');
    assert.equal(report.ok, false);
    assert.equal(report.summary.missing, 5);
    const decoders = report.checks.find((c) => c.id === 'decoders')!;
    assert.deepEqual([decoders.status, decoders.required, decoders.detail], ['missing', false, 'not found on PATH: zstd, bzip2, xz (dumps compressed with them cannot be imported here).']);
    if (existsSync('/etc/debian_version')) assert.equal(decoders.fix, 'apt-get install zstd bzip2 xz-utils');
  });

  it('an optional tool missing leaves the report ready', async () => {
    const bin = tempDir();
    writeScript(bin, 'git', 'echo "git version 2.39.5"');
    writeScript(bin, 'python3', 'echo "Python 3.11.7"');
    const report = await runDoctor({ env: { PATH: bin }, probeStore: okStore });
    assert.equal(report.checks.find((c) => c.id === 'ssh')!.status, 'missing');
    assert.equal(report.ok, true);
    // The decoders of compressed dumps: one missing is named alone.
    writeScript(bin, 'zstd', 'echo "zstd v1.5.6"');
    writeScript(bin, 'xz', 'echo "xz 5.4.1"');
    const some = (await runDoctor({ env: { PATH: bin }, probeStore: okStore })).checks.find((c) => c.id === 'decoders')!;
    assert.equal(some.detail, 'not found on PATH: bzip2 (dumps compressed with it cannot be imported here).');
    assert.equal(some.version, 'zstd 1.5.6, xz 5.4.1');
    // bzip2 prints its version on stderr.
    writeScript(bin, 'bzip2', 'echo "bzip2, a block-sorting file compressor.  Version 1.0.8, 13-Jul-2019." >&2');
    const all = (await runDoctor({ env: { PATH: bin }, probeStore: okStore })).checks.find((c) => c.id === 'decoders')!;
    assert.deepEqual([all.status, all.version], ['ok', 'zstd 1.5.6, bzip2 1.0.8, xz 5.4.1']);
  });

  it('flags an interpreter that is too old, or that fails, as a problem rather than ok', async () => {
    const bin = tempDir();
    writeScript(bin, 'git', 'echo "git version 2.39.5"');
    const old = writeScript(bin, 'oldpy', 'echo "Python 3.6.9"');
    let report = await runDoctor({ env: { PATH: bin }, python: old, probeStore: okStore });
    let py = report.checks.find((c) => c.id === 'python3')!;
    assert.equal(py.status, 'error');
    assert.match(py.detail, /older than 3\.9/);
    assert.equal(report.ok, false);

    const broken = writeScript(bin, 'brokenpy', 'echo "libpython missing" >&2; exit 127');
    report = await runDoctor({ env: { PATH: bin }, python: broken, probeStore: okStore });
    py = report.checks.find((c) => c.id === 'python3')!;
    assert.equal(py.status, 'error');
    assert.match(py.detail, /exited with 127: libpython missing/);
  });

  it('takes an interpreter path with spaces and shell metacharacters literally', async () => {
    const dir = tempDir();
    const weird = path.join(dir, 'my py $(touch pwned); `x`');
    writeScript(dir, path.basename(weird), 'echo "Python 3.12.1"');
    const report = await runDoctor({ python: weird, probeStore: okStore });
    assert.equal(report.checks.find((c) => c.id === 'python3')!.version, '3.12.1');
    assert.equal(existsSync(path.join(process.cwd(), 'pwned')), false);
  });

  it('loads the real embedded store', async () => {
    const report = await runDoctor();
    const store = report.checks.find((c) => c.id === 'store')!;
    assert.equal(store.status, 'ok', store.detail);
    assert.match(store.version!, /^DuckDB v\d+\.\d+/);
  });

  it('reports a store that cannot load with how to repair it', async () => {
    const report = await runDoctor({
      probeStore: async () => {
        throw new Error("Cannot find module '@duckdb/node-bindings-linux-x64/duckdb.node'\nRequire stack: …");
      },
    });
    const store = report.checks.find((c) => c.id === 'store')!;
    assert.equal(store.status, 'error');
    assert.match(store.detail, /Cannot find module/);
    assert.doesNotMatch(store.detail, /Require stack/);
    assert.match(store.fix!, /npm ci/);
    assert.equal(report.ok, false);
  });

  it('formats a text report with the fix under each missing piece', async () => {
    const empty = tempDir();
    const text = formatDoctorReport(await runDoctor({ env: { PATH: empty }, probeStore: okStore }));
    assert.match(text, /\[MISSING\] git/);
    assert.match(text, /→ .*git/);
    assert.match(text, /\nNot ready: a required piece is missing or broken; its row says how to fix it, then check again\.\n1 ok, 5 missing, 0 error, 1 skipped\.$/);
  });

  it('Slurm installed but unconfigured: says so and the next step (nothing to install), and the verdict names it', async () => {
    const bin = tempDir();
    writeScript(bin, 'git', 'echo "git version 2.39.5"');
    writeScript(bin, 'python3', 'echo "Python 3.11.7"');
    // What sbatch prints on a machine with Slurm installed and no slurm.conf.
    writeScript(bin, 'sbatch', 'echo "sbatch: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host" >&2; echo "sbatch: error: fetch_config: DNS SRV lookup failed" >&2; exit 1');
    const report = await runDoctor({ env: { PATH: bin }, probeStore: okStore });
    const sbatch = report.checks.find((c) => c.id === 'sbatch')!;
    assert.equal(sbatch.status, 'error');
    assert.match(sbatch.fix!, /^Slurm is installed here but not configured \(no slurm\.conf\): set SLURM_CONF/);
    assert.doesNotMatch(sbatch.fix!, /apt-get install/);
    assert.equal(report.ok, true);
    assert.equal(report.level, 'attention');
    const text = formatDoctorReport(report);
    assert.match(text, /\nReady for local use, but an optional piece fails: Slurm \(sbatch\)\. Its row says what is wrong and the next step\.\n/);
    assert.doesNotMatch(text, /^Ready:/m, 'no bare "Ready" beside a failing row');
    // A missing sbatch still gets the install hint, and an all-clear report says Ready.
    const fine = await runDoctor({ env: { PATH: tempDir() }, probeStore: okStore });
    assert.match(fine.checks.find((c) => c.id === 'sbatch')!.fix!, /install/);
  });
});
