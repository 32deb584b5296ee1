// What the Runs view and the job commands ask of the engine: the records, one poll per
// profile, the launch choices (versions from the ledger, templates, profiles from the
// manifest merged with the editor setting), submit, cancel, log following and fetch.
// No editor here (it lives in the engine bundle, dist/panels.js): the integration tests run
// it against real git repositories, a real store and the real test cluster.
import path from 'node:path';
import { readLedger } from '../../core/harness/ledger';
import { git } from '../../core/harness/git';
import { openHarness, readWorkingManifest } from '../../core/harness/repo';
import { cancelJob, fetchOutputs, JobError, loadTemplate, loginArgv, parseProfiles, ProfileError, recordsFor, resolveProfile, shellOf, shQuote, submitJob, waitForJob, type ClusterProfile, type FetchResult, type JobRecord, type LogChunk, type NamedProfile } from '../../core/jobs';
import { defaultStorePath, RolloutStore } from '../../core/store/store';

export const JOB_OUTPUTS = ['rollout_data', 'validation_data', 'metrics.json'];

export function jobRecords(root: string) {
  return recordsFor(root);
}

export function loadJobs(root: string): JobRecord[] {
  return jobRecords(root).list();
}

/**
 * Watches a job that is not final: the engine's monitor polls each profile once per interval
 * for every job watched at once (one squeue on Slurm), saves the records and reports each
 * change. Resolves with the final record; rejects when following needs a person (a login).
 */
export function watchJob(root: string, id: string, o: { onState: (r: JobRecord) => void; onOffline?: (e: Error) => void; signal: AbortSignal }): Promise<JobRecord> {
  return waitForJob(id, { records: jobRecords(root), onState: o.onState, onOffline: o.onOffline, signal: o.signal });
}

export interface ProfilesFound {
  profiles: Record<string, ClusterProfile>;
  /** Where each profile comes from: "evotrainer.yaml" or "setting". */
  origin: Record<string, 'manifest' | 'setting'>;
  defaultName: string | null;
}

/**
 * The manifest's `clusters:` merged with the `evotrainer.clusters` setting (a profile of the
 * same name in the setting wins: the setting is this person's, e.g. their ssh alias). The
 * setting is validated with the profile schema; an error names the bad key.
 */
export function mergedProfiles(root: string | null, setting: unknown): ProfilesFound {
  if (setting !== undefined && setting !== null && (typeof setting !== 'object' || Array.isArray(setting))) {
    throw new ProfileError('setting "evotrainer.clusters" must be an object of profiles by name, e.g. {"gpu": {"kind": "slurm", "host": "login1"}}');
  }
  const fromSetting = setting === undefined || setting === null || (typeof setting === 'object' && !Object.keys(setting).length) ? {} : parseProfiles(setting, 'setting "evotrainer.clusters"');
  let manifest: ReturnType<typeof readWorkingManifest> | null = null;
  if (root) manifest = readWorkingManifest(root);
  const profiles: Record<string, ClusterProfile> = {};
  const origin: Record<string, 'manifest' | 'setting'> = {};
  for (const [k, v] of Object.entries(manifest?.clusters ?? {})) {
    profiles[k] = v;
    origin[k] = 'manifest';
  }
  for (const [k, v] of Object.entries(fromSetting)) {
    profiles[k] = v;
    origin[k] = 'setting';
  }
  return { profiles, origin, defaultName: manifest?.cluster ?? null };
}

export function profileNamed(root: string | null, setting: unknown, name: string | null): NamedProfile {
  const p = mergedProfiles(root, setting);
  return resolveProfile(p.profiles, name, p.defaultName);
}

export interface VersionChoice {
  id: string | null;
  commit: string;
  label: string;
  description: string;
}

export interface LaunchChoices {
  versions: VersionChoice[];
  profiles: { name: string; kind: string; description: string; isDefault: boolean }[];
}

const slugOf = (branch: string) => branch.replace(/^(refs\/heads\/)?evo\/v\d+-?/, '');

/** Versions with a commit, newest first (the promoted one marked); HEAD when the ledger is empty. */
export async function launchChoices(root: string, setting: unknown): Promise<LaunchChoices> {
  const h = await openHarness(root);
  const ledger = await readLedger(h);
  const num = (id: string) => Number(id.replace(/^v/, ''));
  const versions: VersionChoice[] = [...ledger.entries.values()]
    .filter((e) => e.status !== 'rejected')
    .sort((a, b) => num(b.id) - num(a.id))
    .map((e) => ({ id: e.id, commit: e.commit, label: e.id, description: `${e.status}${ledger.promoted?.version === e.id ? ' ★' : ''} · ${e.commit.slice(0, 7)}${slugOf(e.branch) ? ` · ${slugOf(e.branch)}` : ''}` }));
  if (!versions.length) {
    const head = (await git(root, ['rev-parse', 'HEAD'])).stdout.trim();
    versions.push({ id: null, commit: head, label: 'HEAD', description: `no versions yet · ${head.slice(0, 7)}` });
  }
  const found = mergedProfiles(root, setting);
  const names = Object.keys(found.profiles);
  const def = found.defaultName ?? (names.length === 1 ? names[0]! : null);
  const profiles = names.map((n) => {
    const p = found.profiles[n]!;
    return { name: n, kind: p.kind, description: `${p.kind}${p.host ? ` · ${p.host}` : ''} · from ${found.origin[n] === 'setting' ? 'the evotrainer.clusters setting' : 'evotrainer.yaml'}`, isDefault: n === def };
  });
  if (!found.profiles.local) profiles.push({ name: 'local', kind: 'local', description: 'local · runs on this machine', isDefault: !def });
  profiles.sort((a, b) => Number(b.isDefault) - Number(a.isDefault));
  return { versions, profiles };
}

/** Job templates at a commit: `jobs/<name>.sbatch` files and the manifest's `jobs.<name>`. */
export async function templatesAt(root: string, commit: string): Promise<{ name: string; origin: string }[]> {
  const out = new Map<string, string>();
  const ls = await git(root, ['ls-tree', '--name-only', `${commit}:jobs`], { allowFail: true });
  if (ls.code === 0) for (const f of ls.stdout.split('\n')) if (f.endsWith('.sbatch')) out.set(f.slice(0, -'.sbatch'.length), `jobs/${f}`);
  const show = await git(root, ['show', `${commit}:evotrainer.yaml`], { allowFail: true });
  if (show.code === 0) {
    try {
      const { parseManifest } = await import('../../core/harness/manifest');
      const m = parseManifest(show.stdout, 'evotrainer.yaml');
      for (const k of Object.keys(m.jobs ?? {})) if (!out.has(k)) out.set(k, `evotrainer.yaml jobs.${k}`);
    } catch {
      /* a manifest that does not parse at that commit offers its sbatch files only */
    }
  }
  return [...out.entries()].map(([name, origin]) => ({ name, origin })).sort((a, b) => a.name.localeCompare(b.name));
}

export interface LaunchRequest {
  version: string | null;
  commit: string;
  template: string;
  profile: string;
  setting: unknown;
  /** Idempotency key of this launch: a retry (after a login) finishes the same job instead of starting another. */
  key?: string;
}

export async function launchJob(root: string, req: LaunchRequest): Promise<JobRecord> {
  const profile = profileNamed(root, req.setting, req.profile);
  // A template missing at that commit is refused before a record exists.
  await loadTemplate(root, req.commit, req.template);
  return submitJob({
    profile,
    harness: root,
    commit: req.commit,
    version: req.version,
    run: `${req.template}-${req.version ?? req.commit.slice(0, 7)}`,
    templateName: req.template,
    outputs: JOB_OUTPUTS,
    key: req.key ?? null,
    records: jobRecords(root),
  });
}

export async function cancelRun(root: string, id: string): Promise<JobRecord> {
  // The watch that follows the job sees it end (the next poll); no second poll here.
  return cancelJob(id, { records: jobRecords(root) });
}

export function jobRecord(root: string, id: string): JobRecord {
  return jobRecords(root).require(id);
}

/**
 * argv of the editor's login terminal: the profile's login (loginArgv runs `true` as the
 * connection master, so ControlPersist keeps the shared connection up after the terminal's
 * process ends).
 */
export function loginCommand(profile: NamedProfile): string[] {
  return loginArgv(profile);
}

/** Whether batch calls to the profile's host get through now (after a login in a terminal). */
export async function loginWorks(profile: NamedProfile): Promise<boolean> {
  try {
    return (await shellOf(profile).exec('true', { timeoutMs: 20_000 })).code === 0;
  } catch (err) {
    if ((err as { failure?: unknown }).failure === 'needs-login') return false;
    throw err;
  }
}

/**
 * The log bytes the editor already showed (its follower's offsets), so a log opened again
 * (another window, after a restart) shows them before following on from there.
 */
export async function shownBefore(root: string, id: string, follower: string): Promise<LogChunk[]> {
  const r = jobRecord(root, id);
  const offs = r.logOffsets[follower] ?? {};
  const out: LogChunk[] = [];
  for (const [task, n] of Object.entries(offs)) {
    if (!n || !r.jobDir) continue;
    const f = `${r.jobDir}/${task ? `log.${task}` : 'log'}`;
    const res = await shellOf(r.profile).exec(`head -c ${Math.floor(n)} ${shQuote(f)} 2>/dev/null`, { timeoutMs: 60_000 });
    out.push({ jobId: id, task, text: res.stdout.toString('utf8') });
  }
  return out;
}

export function followJob(root: string, id: string, o: { follower: string; onLog: (c: LogChunk) => void; onState: (r: JobRecord) => void; onOffline: (e: Error) => void; signal: AbortSignal }): Promise<JobRecord> {
  return waitForJob(id, { records: jobRecords(root), follower: o.follower, onLog: o.onLog, onState: o.onState, onOffline: o.onOffline, signal: o.signal });
}

/** Fetches the job's outputs into .evotrainer/jobs/outputs/<id> and imports them into the store. */
export async function fetchAndImport(root: string, id: string): Promise<FetchResult & { dir: string }> {
  const records = jobRecords(root);
  const r = records.require(id);
  if (!r.outputs.length) throw new JobError(`job ${id} declares no outputs to fetch`);
  const dir = path.join(records.dir, 'outputs', id);
  const store = await RolloutStore.open(defaultStorePath(root));
  try {
    return { ...(await fetchOutputs(id, dir, { records, store })), dir };
  } finally {
    store.close();
  }
}

export function failureText(r: JobRecord): string {
  if (!r.failure) return '';
  return [`${r.failure.message}.`, r.failure.logTail ? `--- log tail ---\n${r.failure.logTail.trimEnd()}\n---` : '', `Next: ${r.failure.nextStep}`].filter(Boolean).join('\n');
}
