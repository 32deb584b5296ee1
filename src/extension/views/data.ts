// What the views and the version panels read from the engine: the lineage with its
// evidence, the findings of a version's rollouts, the skills. No editor here, so the
// integration tests run it against real git repositories and a real store.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { computeHealth, computeSeries, type Scope } from '../../core/diagnose/health';
import { evaluateRules } from '../../core/diagnose/rules';
import { readLedger, type Evidence, type LedgerEntry } from '../../core/harness/ledger';
import { git, revParse } from '../../core/harness/git';
import { lineage } from '../../core/harness/lineage';
import { HarnessError, openHarness, readWorkingManifest, type Harness } from '../../core/harness/repo';
import { listSkills, skillsDir } from '../../core/harness/skills';
import type { Finding } from '../../core/model';
import { defaultStorePath, RolloutStore } from '../../core/store/store';
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
 * the latest imported run. Null model fields when the store is empty or missing.
 */
export async function loadFindings(root: string, version: string | null): Promise<FindingsModel | null> {
  const file = defaultStorePath(root);
  if (!existsSync(file)) return null;
  const store = await RolloutStore.open(file);
  try {
    const scope = await findingsScope(store, version);
    if (!scope) return null;
    const report = await computeHealth(store, scope);
    if (!report.rollouts) return null;
    const findings: Finding[] = evaluateRules({ health: report, series: await computeSeries(store, scope) });
    await store.ensureDerivedViews();
    const where = scope.version ? 'where version = ?' : 'where run_id = ?';
    const modes = await store.all<{ failure_mode: string; n: number }>(`select failure_mode, count(*)::int as n from rollout_failure_modes ${where} group by 1 order by n desc`, [scope.version ?? scope.run!]);
    const failureModes: FailureModeCount[] = modes.map((m) => ({ mode: m.failure_mode, count: Number(m.n) }));
    return buildFindingsModel({ scope: { version: scope.version ?? null, run: scope.run ?? null, rollouts: report.rollouts }, findings, failureModes });
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
