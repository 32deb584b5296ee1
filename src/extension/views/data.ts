// What the views and the version panels read from the engine: the lineage with its
// evidence, the findings of a version's rollouts, the skills. No editor here, so the
// integration tests run it against real git repositories and a real store.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { diagnose, problemLines } from '../../core/diagnose/diagnose';
import { computeHealth, type Scope } from '../../core/diagnose/health';
import { readLedger, type Evidence, type LedgerEntry } from '../../core/harness/ledger';
import { git, revParse } from '../../core/harness/git';
import { lineage } from '../../core/harness/lineage';
import { HarnessError, openHarness, readWorkingManifest, type Harness } from '../../core/harness/repo';
import { listSkills, skillsDir } from '../../core/harness/skills';
import { defaultStorePath, RolloutStore } from '../../core/store/store';
import type { HealthScope, HealthScopeOption, HealthState } from '../../viewer/health/protocol';
import { buildFindingsModel, buildSkillsModel, buildVersionsModel, type BacktestInfo, type FailureModeCount, type FindingsModel, type SkillItem, type SkillsModel, type VersionsModel } from './model';

export async function harnessAt(root: string): Promise<Harness> {
  return openHarness(root);
}

/** The latest backtest evidence of an entry, as the node shows it. */
export function backtestOf(e: LedgerEntry): BacktestInfo | null {
  const ev = e.transitions.flatMap((t) => t.evidence).filter((x): x is Evidence => x.kind === 'backtest').pop();
  if (!ev) return null;
  const data = ev.data as { verdict?: unknown } | undefined;
  const v = typeof data === 'object' && data && typeof data.verdict === 'string' ? data.verdict : '';
  return { verdict: v === 'pass' || v === 'fail' ? v : 'inconclusive', summary: ev.summary };
}

/**
 * Primary-metric values measured on the store's rollouts, per version that has rollouts
 * (for versions whose ledger entry has no evaluated value yet). Null when there is no store.
 */
export async function storePrimaryMetrics(root: string, primaryMetric: string | null, versions: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const file = defaultStorePath(root);
  if (!primaryMetric || !versions.length || !existsSync(file)) return out;
  const store = await RolloutStore.open(file);
  try {
    const present = new Set((await store.all<{ version: string | null }>('select distinct version from rollouts where version is not null')).map((r) => r.version!));
    for (const v of versions) {
      if (!present.has(v)) continue;
      const report = await computeHealth(store, { version: v });
      const value = report.metrics.find((m) => m.name === primaryMetric)?.value;
      if (typeof value === 'number') out.set(v, value);
    }
  } finally {
    store.close();
  }
  return out;
}

/** Null when the folder is not (yet) a git repository: the view shows its welcome instead of an error. */
export async function loadVersions(root: string): Promise<VersionsModel | null> {
  let h: Harness;
  try {
    h = await harnessAt(root);
  } catch (err) {
    if (err instanceof HarnessError && /not inside a git repository/.test(err.message)) return null;
    throw err;
  }
  const [l, ledger] = await Promise.all([lineage(h), readLedger(h)]);
  const reasons = new Map<string, string>();
  const backtests = new Map<string, BacktestInfo>();
  for (const e of ledger.entries.values()) {
    if (e.rejectReason) reasons.set(e.id, e.rejectReason);
    const b = backtestOf(e);
    if (b) backtests.set(e.id, b);
  }
  const missing = l.versions.filter((v) => !v.primary || v.primary.value === null).map((v) => v.id as string);
  let primaryName: string | null = l.versions.find((v) => v.primary)?.primary?.name ?? null;
  if (!primaryName) {
    try {
      primaryName = readWorkingManifest(h.root).primary_metric ?? null;
    } catch {
      primaryName = null;
    }
  }
  let storeMetrics = new Map<string, number>();
  try {
    storeMetrics = await storePrimaryMetrics(h.root, primaryName, missing);
  } catch {
    // A store another process holds (an import running) only hides the measured values.
  }
  return buildVersionsModel({ lineage: l, storeMetrics, rejectReasons: reasons, backtests });
}

/** The ledger entry of one version (the evidence panel's source). */
export async function loadEntry(root: string, id: string): Promise<{ entry: LedgerEntry; parent: LedgerEntry | null; promoted: string | null }> {
  const ledger = await readLedger(await harnessAt(root));
  const entry = ledger.entries.get(id as LedgerEntry['id']);
  if (!entry) throw new Error(`no version ${id} in the ledger of ${root}`);
  return { entry, parent: entry.parent ? (ledger.entries.get(entry.parent) ?? null) : null, promoted: ledger.promoted?.version ?? null };
}

/**
 * The rollouts Findings (and, by default, the health report) look at: the selected
 * version's, when it has imported rollouts, else the latest imported run's. Null when the
 * store is empty.
 */
export async function findingsScope(store: RolloutStore, version: string | null): Promise<Scope | null> {
  const hasVersion = version ? ((await store.one<{ n: number }>('select count(*)::int as n from rollouts where version = ?', [version]))?.n ?? 0) > 0 : false;
  if (version && hasVersion) return { version };
  const latest = await store.one<{ run_id: string }>('select run_id from rollouts order by id desc limit 1');
  return latest ? { run: latest.run_id } : null;
}

/**
 * Findings for a version's rollouts; with no version, or none imported for it, those of
 * the latest imported run. The harness's own metrics, rules and manifest thresholds apply,
 * as in `evotrainer diagnose`; its script metrics run only with `trust` (a trusted
 * workspace). Null when the store is empty or missing.
 */
export async function loadFindings(root: string, version: string | null, opts: { trust?: boolean } = {}): Promise<FindingsModel | null> {
  const file = defaultStorePath(root);
  if (!existsSync(file)) return null;
  const store = await RolloutStore.open(file);
  try {
    const scope = await findingsScope(store, version);
    if (!scope) return null;
    const d = await diagnose(store, { harness: root, scope, trust: opts.trust === true });
    if (!d.health.rollouts) return null;
    const failureModes: FailureModeCount[] = d.failureModes.map((m) => ({ mode: m.mode, count: m.count }));
    return buildFindingsModel({ scope: { version: scope.version ?? null, run: scope.run ?? null, rollouts: d.health.rollouts }, findings: d.findings, failureModes });
  } finally {
    store.close();
  }
}

const scopeKey = (s: HealthScope): string => (s.version !== undefined ? `version:${s.version}` : s.run !== undefined ? `run:${s.run}` : 'all');

/** Every scope the health report can pool: each run, each version, and the whole store. */
async function healthScopes(store: RolloutStore): Promise<HealthScopeOption[]> {
  const runs = await store.all<{ v: string; n: number }>('select run_id as v, count(*)::int as n from rollouts group by 1 order by 1');
  const versions = await store.all<{ v: string; n: number }>('select version as v, count(*)::int as n from rollouts where version is not null group by 1 order by 1');
  const total = runs.reduce((a, r) => a + Number(r.n), 0);
  const option = (scope: HealthScope, label: string, n: number): HealthScopeOption => ({ key: scopeKey(scope), label: `${label} (${n} rollouts)`, scope, rollouts: n });
  return [
    ...runs.map((r) => option({ run: r.v }, `run ${r.v}`, Number(r.n))),
    ...versions.map((r) => option({ version: r.v }, `version ${r.v}`, Number(r.n))),
    option({}, `every run and version pooled`, total),
  ];
}

/**
 * The Health panel's report of the harness at `root`: the scope the user picked (a key of
 * the scopes), else the one Findings shows for `findingsVersion`, else the whole store;
 * metrics, findings, failure modes and problems as `evotrainer health`/`diagnose` compute
 * them (harness metrics, rules and thresholds included; script metrics only with `trust`).
 */
export async function loadHealth(root: string, opts: { picked?: string | null; findingsVersion?: string | null; trust?: boolean } = {}): Promise<HealthState> {
  const file = defaultStorePath(root);
  const base: HealthState = { status: 'loading', store: file, scope: opts.picked ?? '', scopes: [], report: null, findings: [], failureModes: [], problems: [], error: null };
  const store = await RolloutStore.open(file);
  try {
    const scopes = await healthScopes(store);
    const fallback = await findingsScope(store, opts.findingsVersion ?? null);
    const chosen = scopes.find((o) => o.key === opts.picked) ?? scopes.find((o) => fallback && o.key === scopeKey(fallback)) ?? scopes[scopes.length - 1]!;
    const scoped = { ...base, scope: chosen.key, scopes };
    const d = await diagnose(store, { harness: root, scope: chosen.scope, trust: opts.trust === true });
    const problems = problemLines(d);
    if (!d.health.rollouts && !d.health.curvePoints) return { ...scoped, status: 'empty', report: d.health, problems };
    return { ...scoped, status: 'done', report: d.health, findings: d.findings, failureModes: d.failureModes, problems };
  } finally {
    store.close();
  }
}

export function skillDirs(root: string): { harness: string; library?: string } {
  let library: string | undefined;
  try {
    const lib = readWorkingManifest(root).skills?.library;
    if (lib) library = path.resolve(root, lib);
  } catch {
    library = undefined;
  }
  return { harness: path.join(root, 'skills'), ...(library ? { library } : {}) };
}

export function loadSkills(root: string): SkillsModel {
  const { skills, problems } = listSkills(skillDirs(root));
  const items: SkillItem[] = skills.map((s) => ({
    id: s.record.id,
    title: s.record.title,
    category: s.record.category,
    domains: s.record.domains,
    trigger: s.record.trigger,
    file: s.file,
    origin: s.origin,
    shared: s.record.shared,
    evidence: s.record.validation.length,
  }));
  return buildSkillsModel(items, problems);
}

export { skillsDir };

/** A file at a version's commit; null when the version lacks it (added or deleted by the change). */
export async function versionFile(root: string, version: string, file: string): Promise<string | null> {
  const h = await harnessAt(root);
  let commit: string | null;
  if (/^v\d+$/.test(version)) {
    const ledger = await readLedger(h);
    commit = ledger.entries.get(version as LedgerEntry['id'])?.commit ?? null;
    if (!commit) throw new Error(`no version ${version} in the ledger`);
  } else commit = await revParse(h.root, `${version}^{commit}`);
  if (!commit) throw new Error(`"${version}" is not a version or commit of ${h.root}`);
  const r = await git(h.root, ['show', `${commit}:${file}`], { allowFail: true });
  return r.code === 0 ? r.stdout : null;
}
