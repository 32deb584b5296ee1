import { existsSync } from 'node:fs';
import os from 'node:os';
import { run, type ExecResult } from '../util/exec';
import { probeStore } from '../store/duckdb';

export type CheckStatus = 'ok' | 'missing' | 'error' | 'skipped';
export type CheckScope = 'local' | 'store' | 'cluster';

export interface DoctorCheck {
  id: string;
  label: string;
  scope: CheckScope;
  status: CheckStatus;
  /** Required pieces make the report fail; optional ones only explain what is unavailable. */
  required: boolean;
  /** What the piece is needed for, in the user's terms. */
  purpose: string;
  version?: string;
  detail: string;
  /** What to do when it is not ok. */
  fix?: string;
}

export interface DoctorReport {
  tool: 'evotrainer';
  generatedAt: string;
  host: string;
  platform: string;
  node: string;
  ok: boolean;
  /** 'attention': ready, but an optional piece is there and broken (say so, never a bare "Ready" beside a red row). */
  level: 'ready' | 'attention' | 'not-ready';
  /** The one-line verdict the CLI and the editor show. */
  verdict: string;
  summary: Record<CheckStatus, number>;
  checks: DoctorCheck[];
}

export interface DoctorOptions {
  /** Interpreter that runs harness reward and filter code. */
  python?: string;
  env?: NodeJS.ProcessEnv;
  /** Name of the configured cluster profile, when there is one. */
  clusterProfile?: string | null;
  /** Checks the profile over ssh (src/core/doctor/cluster.ts); kept out of this module so the editor's doctor stays light. */
  clusterCheck?: () => Promise<DoctorCheck>;
  /** Replaces the store probe (the CLI's --no-store, tests of failure rendering). */
  probeStore?: typeof probeStore;
  now?: () => Date;
}

type Platform = 'debian' | 'macos' | 'other';

function detectPlatform(): Platform {
  if (process.platform === 'darwin') return 'macos';
  if (process.platform === 'linux' && existsSync('/etc/debian_version')) return 'debian';
  return 'other';
}

const INSTALL: Record<string, Record<Platform, string>> = {
  git: { debian: 'apt-get install git', macos: 'xcode-select --install (or brew install git)', other: 'install git 2.25 or newer from your package manager' },
  python: { debian: 'apt-get install python3', macos: 'brew install python@3.11', other: 'install Python 3.9 or newer, or set evotrainer.pythonPath / --python to an interpreter' },
  ssh: { debian: 'apt-get install openssh-client', macos: 'OpenSSH ships with macOS; check that /usr/bin/ssh is on PATH', other: 'install the OpenSSH client' },
  sbatch: {
    debian: 'apt-get install slurm-client (only to submit from this machine; jobs normally go to a cluster profile over SSH)',
    macos: 'not needed on a laptop: submit through a cluster profile over SSH',
    other: 'install the Slurm client tools, or submit through a cluster profile over SSH',
  },
};

function firstLine(text: string): string {
  return text.split(/\r?\n/).find((l) => l.trim() !== '')?.trim() ?? '';
}

interface ToolSpec {
  id: string;
  label: string;
  file: string;
  args: string[];
  required: boolean;
  purpose: string;
  install: string;
  /** Picks the version out of the program's output. */
  version: (r: ExecResult) => string;
  /** What is wrong, and the next step, when the program is there but fails (else the install hint). */
  broken?: (r: ExecResult) => string | undefined;
  minimum?: { parse: (v: string) => number[] | null; need: number[]; name: string };
}

function parseVersion(v: string): number[] | null {
  const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : null;
}

function older(have: number[], need: number[]): boolean {
  for (let i = 0; i < need.length; i++) {
    const a = have[i] ?? 0;
    const b = need[i] ?? 0;
    if (a !== b) return a < b;
  }
  return false;
}

async function checkTool(spec: ToolSpec, platform: Platform, env: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  const base = { id: spec.id, label: spec.label, scope: 'local' as const, required: spec.required, purpose: spec.purpose };
  const fix = INSTALL[spec.install]?.[platform];
  const r = await run(spec.file, spec.args, { env, timeoutMs: 10_000 });
  if (r.code === null && (r.error === 'ENOENT' || r.error === 'EACCES')) {
    return { ...base, status: 'missing', detail: `\`${spec.file}\` was not found on PATH.`, fix };
  }
  if (r.code !== 0) {
    const why = r.error === 'ETIMEDOUT' ? 'did not answer within 10 s' : `exited with ${r.code ?? r.error}: ${firstLine(r.stderr || r.stdout)}`;
    return { ...base, status: 'error', detail: `\`${spec.file} ${spec.args.join(' ')}\` ${why}`, fix: spec.broken?.(r) ?? fix };
  }
  const version = spec.version(r);
  if (spec.minimum) {
    const have = spec.minimum.parse(version);
    if (have && older(have, spec.minimum.need)) {
      return { ...base, status: 'error', version, detail: `${spec.label} ${version} is older than ${spec.minimum.need.join('.')}, which ${spec.minimum.name} needs.`, fix };
    }
  }
  return { ...base, status: 'ok', version, detail: `${spec.file} ${version}` };
}

/** The programs that read zstd, bzip2 and xz dumps (gzip is Node's own): optional, one row. */
async function checkDecoders(platform: Platform, env: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  const programs = [
    { file: 'zstd', debian: 'zstd' },
    { file: 'bzip2', debian: 'bzip2' },
    { file: 'xz', debian: 'xz-utils' },
  ];
  const found = await Promise.all(
    programs.map(async (p) => {
      const r = await run(p.file, ['--version'], { env, timeoutMs: 10_000 });
      // zstd "*** Zstandard CLI (64-bit) v1.5.4, …", bzip2 "… Version 1.0.8, …" (on stderr), xz "xz (XZ Utils) 5.4.1"
      return { ...p, ok: r.code === 0, version: /\d+\.\d+(\.\d+)?/.exec(`${r.stdout}\n${r.stderr}`)?.[0] };
    }),
  );
  const missing = found.filter((p) => !p.ok);
  const version = found.filter((p) => p.ok).map((p) => `${p.file} ${p.version ?? '?'}`).join(', ') || undefined;
  const base = { id: 'decoders', label: 'zstd, bzip2, xz', scope: 'local' as const, required: false, purpose: 'import reads .zst, .bz2 and .xz dumps through them (.gz needs nothing)', version };
  if (!missing.length) return { ...base, status: 'ok', detail: version! };
  const names = missing.map((p) => p.file).join(', ');
  const fix = platform === 'debian' ? `apt-get install ${missing.map((p) => p.debian).join(' ')}` : platform === 'macos' ? `brew install ${missing.map((p) => p.file).join(' ')}` : `install ${names} from your package manager`;
  return { ...base, status: 'missing', detail: `not found on PATH: ${names} (dumps compressed with ${missing.length === 1 ? 'it' : 'them'} cannot be imported here).`, fix };
}

async function checkStore(probe: typeof probeStore): Promise<DoctorCheck> {
  const base = {
    id: 'store',
    label: 'Embedded rollout store',
    scope: 'store' as const,
    required: true,
    purpose: 'holds imported rollouts and steps for health reports, backtests and the failure explorer',
  };
  try {
    const p = await probe();
    const missing = [p.json ? null : 'JSON', p.parquet ? null : 'Parquet'].filter(Boolean);
    if (missing.length) {
      return { ...base, status: 'error', version: `DuckDB ${p.version}`, detail: `DuckDB ${p.version} loads but lacks its ${missing.join(' and ')} reader.`, fix: 'reinstall EvoTrainer so that its bundled @duckdb/node-api is used (npm ci)' };
    }
    return { ...base, status: 'ok', version: `DuckDB ${p.version}`, detail: `DuckDB ${p.version} loads; JSON and Parquet readers available.` };
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    return {
      ...base,
      status: 'error',
      detail: `DuckDB did not load: ${firstLine(msg)}`,
      fix: `run \`npm ci\` in the EvoTrainer folder; the store needs the @duckdb/node-api prebuilt binding for ${process.platform}-${process.arch}`,
    };
  }
}

/** Without a probe (the editor's light path), only what the manifest names is reported. */
function clusterNotProbed(name: string | null | undefined): DoctorCheck {
  return {
    id: 'cluster',
    label: 'Cluster profile',
    scope: 'cluster',
    required: false,
    purpose: 'dispatches training, rollout and eval jobs to a GPU cluster over SSH',
    status: 'skipped',
    detail: name ? `Profile "${name}" is configured; \`evotrainer doctor\` in the harness checks it over ssh.` : 'No cluster profile configured: jobs run on the local executor.',
    fix: name ? undefined : 'add a cluster profile (clusters: {NAME: {kind: slurm, host: ALIAS, work_dir: …}}) to evotrainer.yaml to run jobs on a cluster',
  };
}

/** Reports whether this machine has what EvoTrainer needs, and what to install when not. */
export async function runDoctor(opts: DoctorOptions = {}): Promise<DoctorReport> {
  const env = opts.env ?? process.env;
  const platform = detectPlatform();
  const python = opts.python || 'python3';
  const specs: ToolSpec[] = [
    {
      id: 'git', label: 'git', file: 'git', args: ['--version'], required: true, install: 'git',
      purpose: 'the harness is a git repository: versions are branches, evidence lives in git',
      version: (r) => firstLine(r.stdout).replace(/^git version\s*/, ''),
      minimum: { parse: parseVersion, need: [2, 25], name: 'worktrees and trailers' },
    },
    {
      id: 'python3', label: 'Python', file: python, args: ['--version'], required: true, install: 'python',
      purpose: 'runs the harness reward and filter code in backtests',
      version: (r) => firstLine(r.stdout || r.stderr).replace(/^Python\s*/, ''),
      minimum: { parse: parseVersion, need: [3, 9], name: 'the reward worker' },
    },
    {
      id: 'ssh', label: 'OpenSSH client', file: 'ssh', args: ['-V'], required: false, install: 'ssh',
      purpose: 'reaches remote clusters (honours ~/.ssh/config, ProxyJump, agents)',
      version: (r) => firstLine(r.stderr || r.stdout),
    },
    {
      id: 'sbatch', label: 'Slurm (sbatch)', file: 'sbatch', args: ['--version'], required: false, install: 'sbatch',
      purpose: 'submits jobs when this machine is itself a Slurm login node',
      version: (r) => firstLine(r.stdout).replace(/^slurm\s*/, ''),
      // Installed but with no configuration (no slurm.conf, no DNS SRV record): nothing to install.
      broken: (r) =>
        /resolve_ctls_from_dns_srv|slurm\.conf|configuration/i.test(`${r.stderr}\n${r.stdout}`)
          ? 'Slurm is installed here but not configured (no slurm.conf): set SLURM_CONF to the cluster\'s slurm.conf if this is a login node; otherwise nothing to do, jobs go to a cluster profile over SSH (clusters: in evotrainer.yaml)'
          : undefined,
    },
  ];
  const checks = await Promise.all([
    ...specs.map((s) => checkTool(s, platform, env)),
    checkDecoders(platform, env),
    checkStore(opts.probeStore ?? probeStore),
  ]);
  checks.push(opts.clusterCheck ? await opts.clusterCheck() : clusterNotProbed(opts.clusterProfile));
  const summary: Record<CheckStatus, number> = { ok: 0, missing: 0, error: 0, skipped: 0 };
  for (const c of checks) summary[c.status]++;
  const ok = checks.every((c) => !c.required || c.status === 'ok');
  const broken = checks.filter((c) => !c.required && c.status === 'error').map((c) => c.label);
  const level = !ok ? 'not-ready' : broken.length ? 'attention' : 'ready';
  return {
    tool: 'evotrainer',
    generatedAt: (opts.now?.() ?? new Date()).toISOString(),
    host: os.hostname(),
    platform: `${process.platform}-${process.arch}${platform === 'debian' ? ' (Debian)' : ''}`,
    node: process.version,
    ok,
    level,
    verdict:
      level === 'not-ready'
        ? 'Not ready: a required piece is missing or broken; its row says how to fix it, then check again.'
        : level === 'attention'
          ? `Ready for local use, but ${broken.length === 1 ? 'an optional piece fails' : `${broken.length} optional pieces fail`}: ${broken.join(', ')}. Its row says what is wrong and the next step.`
          : 'Ready: everything EvoTrainer needs on this machine is in place.',
    summary,
    checks,
  };
}

const MARK: Record<CheckStatus, string> = { ok: 'ok', missing: 'MISSING', error: 'ERROR', skipped: 'skipped' };

/** The plain-text report shared by the CLI and the editor's output channel. */
export function formatDoctorReport(report: DoctorReport): string {
  const width = Math.max(...report.checks.map((c) => c.label.length));
  const lines = [`EvoTrainer environment check — ${report.host} (${report.platform}, node ${report.node})`, ''];
  for (const c of report.checks) {
    const tag = `[${MARK[c.status]}]`.padEnd(10);
    const req = c.required ? '' : ' (optional)';
    lines.push(`${tag}${c.label.padEnd(width)}  ${c.status === 'ok' ? c.version ?? c.detail : c.detail}${req}`);
    if (c.status !== 'ok' && c.fix) lines.push(`${' '.repeat(10)}${' '.repeat(width)}  → ${c.fix}`);
  }
  const s = report.summary;
  lines.push('', report.verdict, `${s.ok} ok, ${s.missing} missing, ${s.error} error, ${s.skipped} skipped.`);
  return lines.join('\n');
}
