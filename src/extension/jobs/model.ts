// The Runs view's model: job records grouped per cluster profile, with what each row shows
// (state icon and colour, elapsed against the time limit, version and run) and which
// context-menu actions apply. Pure: no editor and no engine, so activation stays light and
// the unit tests read it directly. (Type-only imports of the engine.)
import type { JobRecord, JobState } from '../../core/jobs';
import { displayLine } from '../../core/jobs/logLines';

export interface RunIcon {
  /** A codicon id. */
  id: string;
  /** A theme colour id (follows dark, light and high-contrast themes). */
  color: string;
}

export interface RunNode {
  kind: 'job';
  id: string;
  profile: string;
  label: string;
  description: string;
  tooltip: string;
  icon: RunIcon;
  state: JobState;
  /** `evotrainer.job` plus `+cancel`, `+log`, `+fetch` for the actions that apply. */
  contextValue: string;
  /** Seconds the job has run (now − start while running), null before it starts. */
  elapsedSeconds: number | null;
  limitSeconds: number | null;
}

export interface ProfileGroup {
  kind: 'profile';
  name: string;
  profileKind: string;
  host: string | null;
  jobs: RunNode[];
  active: number;
  /** Milliseconds between polls of this profile (its poll_seconds, default 10 s). */
  pollMs: number;
}

export interface RunsModel {
  groups: ProfileGroup[];
  /** Jobs not final yet (submitting, pending, running), all profiles. */
  active: number;
  running: number;
}

const FINAL: readonly JobState[] = ['completed', 'failed', 'cancelled', 'timeout', 'oom', 'node_fail', 'lost'];
export const isFinalState = (s: JobState) => FINAL.includes(s);

const ICONS: Record<JobState, RunIcon> = {
  submitting: { id: 'cloud-upload', color: 'charts.blue' },
  pending: { id: 'clock', color: 'charts.yellow' },
  running: { id: 'sync~spin', color: 'charts.blue' },
  completed: { id: 'pass-filled', color: 'testing.iconPassed' },
  failed: { id: 'error', color: 'testing.iconFailed' },
  cancelled: { id: 'circle-slash', color: 'disabledForeground' },
  timeout: { id: 'watch', color: 'testing.iconFailed' },
  oom: { id: 'flame', color: 'testing.iconFailed' },
  node_fail: { id: 'server-environment', color: 'testing.iconFailed' },
  lost: { id: 'question', color: 'editorWarning.foreground' },
};

export function stateIcon(s: JobState): RunIcon {
  return ICONS[s] ?? ICONS.lost;
}

/**
 * A Slurm time limit in seconds: "MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM",
 * "D-HH:MM:SS" (sbatch --time). Null for "UNLIMITED", "INFINITE" or what is not a time.
 */
export function parseTimeLimit(t: string | undefined | null): number | null {
  if (!t) return null;
  const m = /^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$/.exec(t.trim());
  if (!m) return null;
  const [, d, a, b, c] = m;
  const n = (x: string | undefined) => (x === undefined ? 0 : Number(x));
  if (d !== undefined) return n(d) * 86400 + n(a) * 3600 + n(b) * 60 + n(c);
  if (c !== undefined) return n(a) * 3600 + n(b) * 60 + n(c);
  if (b !== undefined) return n(a) * 60 + n(b);
  return n(a) * 60;
}

/** 42s, 3m 07s, 1h 02m, 2d 03h. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 86400)}d ${String(Math.floor((s % 86400) / 3600)).padStart(2, '0')}h`;
}

/** How long the job has run: to its end when final, to `now` while it runs. */
export function elapsedOf(r: JobRecord, now: number): number | null {
  if (r.elapsedSeconds !== null && r.elapsedSeconds !== undefined && isFinalState(r.state)) return r.elapsedSeconds;
  if (!r.startedAt) return null;
  const end = r.endedAt && isFinalState(r.state) ? Date.parse(r.endedAt) : now;
  return Math.max(0, (end - Date.parse(r.startedAt)) / 1000);
}

/** Rollout text and job names are untrusted: no control characters or escapes in a row, hidden characters marked. */
export function plain(s: string, max = 200): string {
  const t = displayLine(s).replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

export function presentJob(r: JobRecord, now: number): RunNode {
  const elapsed = elapsedOf(r, now);
  const limit = parseTimeLimit(r.profile.sbatch?.time);
  const time = elapsed === null ? null : limit ? `${formatDuration(elapsed)} / ${formatDuration(limit)}` : formatDuration(elapsed);
  const who = [r.version, r.run].filter((x): x is string => !!x).map((x) => plain(x, 40));
  const label = `${plain(r.template, 40)}${r.version ? ` ${plain(r.version, 20)}` : ''}`;
  const description = [r.state === 'node_fail' ? 'node fail' : r.state, time, r.run ? `run ${plain(r.run, 40)}` : null, r.remoteId ? `#${r.remoteId}` : null].filter(Boolean).join(' · ');
  const tip = [
    `${r.template} — ${r.state}${r.exitCode !== null && r.exitCode !== undefined ? ` (exit ${r.exitCode})` : ''}`,
    `job ${r.id}${r.remoteId ? ` (${r.profile.kind === 'slurm' ? 'Slurm job' : 'pid'} ${r.remoteId})` : ''} on ${r.profile.name}${r.profile.host ? ` (${r.profile.host})` : ''}`,
    who.length ? `version ${r.version ?? '—'}, run ${r.run ?? '—'}` : '',
    r.commit ? `commit ${r.commit.slice(0, 12)}` : '',
    time ? `elapsed ${time}` : '',
    r.gpuHours !== null && r.gpuHours !== undefined ? `${r.gpuHours.toFixed(2)} GPU-hours` : '',
    r.failure?.message ?? '',
    r.failure ? `Next: ${r.failure.nextStep}` : '',
    Object.keys(r.fetched ?? {}).length ? `${Object.keys(r.fetched).length} output file(s) fetched` : '',
  ].filter(Boolean);
  const actions = ['evotrainer.job'];
  if (!isFinalState(r.state) && r.remoteId) actions.push('+cancel');
  if (r.jobDir) actions.push('+log');
  if (r.jobDir && r.outputs.length) actions.push('+fetch');
  return {
    kind: 'job',
    id: r.id,
    profile: r.profile.name,
    label,
    description,
    tooltip: tip.map((l) => plain(l, 400)).join('\n'),
    icon: stateIcon(r.state),
    state: r.state,
    contextValue: actions.join(''),
    elapsedSeconds: elapsed,
    limitSeconds: limit,
  };
}

/** Groups per profile (in name order; `local` last), newest job first within a group. */
export function buildRunsModel(records: JobRecord[], now: number): RunsModel {
  const groups = new Map<string, ProfileGroup>();
  let active = 0;
  let running = 0;
  for (const r of records) {
    const name = r.profile.name;
    let g = groups.get(name);
    if (!g) groups.set(name, (g = { kind: 'profile', name, profileKind: r.profile.kind, host: r.profile.host ?? null, jobs: [], active: 0, pollMs: Math.round((r.profile.poll_seconds ?? 10) * 1000) }));
    g.jobs.push(presentJob(r, now));
    if (!isFinalState(r.state)) {
      g.active++;
      active++;
      g.pollMs = Math.min(g.pollMs, Math.round((r.profile.poll_seconds ?? 10) * 1000));
    }
    if (r.state === 'running') running++;
  }
  const byTime = new Map(records.map((r) => [r.id, r.submittedAt]));
  for (const g of groups.values()) g.jobs.sort((a, b) => (byTime.get(b.id) ?? '').localeCompare(byTime.get(a.id) ?? '') || b.id.localeCompare(a.id));
  const list = [...groups.values()].sort((a, b) => Number(a.name === 'local') - Number(b.name === 'local') || a.name.localeCompare(b.name));
  return { groups: list, active, running };
}

export function groupDescription(g: ProfileGroup): string {
  const where = g.host ? `${g.profileKind} · ${plain(g.host, 40)}` : g.profileKind;
  return `${where} · ${g.active ? `${g.active} active, ` : ''}${g.jobs.length} job${g.jobs.length === 1 ? '' : 's'}`;
}

/** The status bar's text: null when nothing is queued or running. */
export function statusText(m: RunsModel): { text: string; tooltip: string } | null {
  if (!m.active) return null;
  const pending = m.active - m.running;
  return {
    text: `$(sync~spin) ${m.active} job${m.active === 1 ? '' : 's'}`,
    tooltip: `EvoTrainer: ${m.running} running${pending ? `, ${pending} queued` : ''} — click to show the Runs view`,
  };
}

/** The poll interval: the shortest among profiles with active jobs (one poll per profile each time). */
export function pollInterval(m: RunsModel, fallbackMs = 10_000): number {
  const active = m.groups.filter((g) => g.active);
  return active.length ? Math.max(250, Math.min(...active.map((g) => g.pollMs))) : fallbackMs;
}
