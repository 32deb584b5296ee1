import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { NamedProfile } from '../../src/core/jobs';
import { repoRoot } from './tmp';

/**
 * The real cluster of the job tests: sshd on 127.0.0.1 and a one-node Slurm, started (or
 * reused) by scripts/cluster-setup.mjs as root. Services stay up for the next test file;
 * `node scripts/cluster-setup.mjs --stop` (run by .ci/run) stops them by pid.
 */
export interface ClusterInfo {
  dir: string;
  host: string;
  sshConfig: string;
  knownHosts: string;
  clientKey: string;
  sshPort: number;
  user: string;
  home: string;
  workDir: string;
  slurmConf: string;
  sshdPidFile: string;
  sshdConfig: string;
  sshdLog: string;
}

let cached: ClusterInfo | null = null;

export function startCluster(): ClusterInfo {
  if (cached) return cached;
  const r = spawnSync(process.execPath, [path.join(repoRoot, 'scripts', 'cluster-setup.mjs'), '--json'], { encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) throw new Error(`the test cluster did not start (scripts/cluster-setup.mjs, exit ${r.status}):\n${r.stderr}`);
  cached = JSON.parse(r.stdout.trim().split('\n').pop()!) as ClusterInfo;
  return cached;
}

/** A profile on the test cluster with its own remote work directory (under the job user's home). */
export function clusterProfile(c: ClusterInfo, kind: 'ssh' | 'slurm', extra: Partial<NamedProfile> = {}): NamedProfile {
  return {
    name: `test-${kind}`,
    kind,
    host: c.host,
    ssh_config: c.sshConfig,
    work_dir: `~/work/t-${randomBytes(4).toString('hex')}`,
    setup: kind === 'slurm' ? [`export SLURM_CONF=${c.slurmConf}`] : [],
    poll_seconds: 0.3,
    ...extra,
  };
}

/** Runs a command as the job user on the cluster (not through the code under test). */
export function asJobUser(c: ClusterInfo, command: string): string {
  return execFileSync('ssh', ['-F', c.sshConfig, '-o', 'BatchMode=yes', '-o', 'ControlMaster=no', '-o', 'ControlPath=none', c.host, '--', `export SLURM_CONF=${c.slurmConf}; ${command}`], { encoding: 'utf8' });
}

/** A harness git repo with a manifest and job templates. */
export function makeHarness(dir: string, files: Record<string, string>): { dir: string; commit: string } {
  mkdirSync(dir, { recursive: true });
  const all: Record<string, string> = { 'evotrainer.yaml': 'name: jobs-test\ndomain: math\n', ...files };
  for (const [f, body] of Object.entries(all)) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    writeFileSync(path.join(dir, f), body);
  }
  const g = (...a: string[]) => execFileSync('git', ['-C', dir, ...a], { encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x' } });
  g('init', '-q', '-b', 'main');
  g('add', '-A');
  g('commit', '-q', '-m', 'harness');
  return { dir, commit: g('rev-parse', 'HEAD').trim() };
}
