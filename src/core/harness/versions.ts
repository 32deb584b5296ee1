import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import type { GateDecision, Hypothesis, Intervention, Layer, VersionId, VersionStatus } from '../model';
import { checkBoundary, checkSingleFactor, type BoundaryViolation, type FactorCheck } from './boundary';
import { analyzeChanges, type ChangeSet } from './changes';
import { readLedger, requireEntry, updateLedger, versionNumber, type Evidence, type Ledger, type LedgerEntry, type PromotedLine } from './ledger';
import { casRef, git, gitOut, oneLine, parseTrailers, revParse, ZERO_OID } from './git';
import { dirtyPaths, EVO_PREFIX, HarnessError, KEEP_PREFIX, listWorktrees, manifestAt, nowIso, operationInProgress, OPERATION_NEXT_STEP, processAlive, PROMOTED_REF, WORKTREES_DIR, type Harness } from './repo';
import { testPause } from './testHooks';
import { shJoin, shQuote } from '../jobs/quote';

export const LAYERS: readonly Layer[] = ['reward', 'filter', 'environment', 'signal', 'behavior', 'diagnostics', 'infra', 'data'];

/** Branch-safe slug: ASCII, lowercase, dashes; unicode folded (é → e) or dropped. */
export function slugify(text: string, max = 40): string {
  const s = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/^if we\s+/, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const cut = s.length <= max ? s : s.slice(0, max + 1).includes('-') ? s.slice(0, max + 1).replace(/-[^-]*$/, '') : s.slice(0, max);
  return cut.replace(/-+$/, '') || 'change';
}

export async function validBranchName(h: Harness, name: string): Promise<boolean> {
  return (await git(h.root, ['check-ref-format', '--branch', name], { allowFail: true })).code === 0;
}

/** Refused by the action boundary: each path with the rule that forbids it. Nothing was changed. */
export class BoundaryError extends HarnessError {
  constructor(
    readonly violations: BoundaryViolation[],
    where: string,
  ) {
    super(`refused by the action boundary (${where}); nothing was committed:\n${violations.map((v) => `  ${v.path}  [${v.rule}]  ${v.detail}`).join('\n')}`);
  }
}

export class SingleFactorError extends HarnessError {
  constructor(readonly check: FactorCheck) {
    super(
      `more than one factor changed${check.factor ? ` (declared factor: ${check.factor})` : ''}; nothing was committed.\n` +
        `  changed: ${check.units.join(', ')}\n  outside the factor: ${check.outside.join(', ')}\n` +
        'Split the change across versions (one factor each), declare the factor with --factor PATH[:key], or pass --override-single-factor "REASON" to record why it is one factor.',
    );
  }
}

// ---------------------------------------------------------------- reconcile

/**
 * Rolls interrupted operations forward from the ledger (the journal): a version whose
 * ledger entry exists but whose branch does not gets its branch; an intervention commit
 * on a branch that the ledger has not recorded yet is recorded from its trailers; a
 * promoted line behind `promoted.json` is moved to it. Every write command runs this
 * first, so a crash at any point leaves a repo the next command completes.
 */
export async function reconcile(h: Harness): Promise<string[]> {
  const repairs: string[] = [];
  sweepThrowawayIndexes(h, repairs);
  const ledger = await readLedger(h);
  if (!ledger.head) return repairs;
  const refs = await branchTips(h);
  const recordLater: LedgerEntry[] = [];
  for (const e of ledger.entries.values()) {
    const tip = refs.get(e.branch);
    if (!tip) {
      const target = refs.get(`remote:${e.branch}`) ?? e.commit;
      if (await revParse(h.root, `${target}^{commit}`)) {
        await casRef(h.root, `refs/heads/${e.branch}`, target, ZERO_OID, `evotrainer: restore ${e.id}`);
        repairs.push(`created branch ${e.branch} for ${e.id} (from the ledger)`);
      } else if (e.status !== 'rejected') {
        // Nothing here can rebuild the commit (git gc pruned it, or it was never fetched): the
        // ledger keeps the entry, and rejecting it records the loss as its evidence.
        repairs.push(
          `${e.id}: branch ${e.branch} and commit ${e.commit.slice(0, 12)} are both missing; fetch them from a remote that has them, or, if none has (pruned by git gc after an interrupted command), record the loss: \`${shJoin(['evotrainer', 'reject', e.id, '--reason', `commit ${e.commit.slice(0, 12)} was lost before its branch existed`])}\``,
        );
      }
    } else if (tip !== e.commit && e.commit === e.base && e.status === 'proposed') {
      const info = await commitInfo(h, tip);
      if (info.trailers['Evo-Version'] === e.id && info.parents[0] === e.base) {
        recordLater.push({ ...e, commit: tip, intervention: interventionFromTrailers(info.trailers, await changedPaths(h, e.base, tip)) });
        repairs.push(`recorded the intervention commit ${tip.slice(0, 12)} of ${e.id} in the ledger`);
      }
    }
  }
  if (recordLater.length) await updateLedger(h, () => ({ entries: recordLater, message: `reconcile: record ${recordLater.map((e) => e.id).join(', ')}` }));
  const p = ledger.promoted;
  if (p) {
    const tip = await revParse(h.root, PROMOTED_REF);
    const previous = p.history[p.history.length - 2]?.commit;
    if (tip !== p.commit && (tip === null || tip === previous)) {
      await casRef(h.root, PROMOTED_REF, p.commit, tip ?? ZERO_OID, `evotrainer: promote ${p.version} (resumed)`);
      repairs.push(`moved evo/promoted to ${p.version} (${p.commit.slice(0, 12)}) as the ledger records`);
    } else if (tip !== p.commit) {
      repairs.push(`evo/promoted (${tip?.slice(0, 12)}) differs from the ledger's promoted ${p.version} (${p.commit.slice(0, 12)}); it was moved by hand — promote a version to realign it`);
    }
  }
  await dropKeepRefs(h);
  for (const r of repairs) h.onRepair?.(r);
  return repairs;
}

/** `evotrainer-apply-<pid>` / `evotrainer-index-<pid>` (and their .lock) of a command that was killed. */
const THROWAWAY_INDEX = /^evotrainer-(?:apply|index)-(\d+)(?:\.lock)?$/;

/** Removes the throwaway indexes of killed commands, in the common git dir and each worktree's. */
function sweepThrowawayIndexes(h: Harness, repairs: string[]): void {
  const worktrees = path.join(h.commonDir, 'worktrees');
  const dirs = [h.commonDir, ...(existsSync(worktrees) ? readdirSync(worktrees).map((d) => path.join(worktrees, d)) : [])];
  for (const dir of dirs) {
    for (const f of existsSync(dir) ? readdirSync(dir) : []) {
      const m = THROWAWAY_INDEX.exec(f);
      if (!m || processAlive(Number(m[1]))) continue;
      rmSync(path.join(dir, f), { force: true });
      repairs.push(`removed ${path.join(dir, f)}, the throwaway index of an interrupted command`);
    }
  }
}

/**
 * Drops keep-alive refs (see KEEP_PREFIX) whose command no longer runs: by now its commit
 * has its branch (restored above from the ledger), or it never reached the ledger.
 */
async function dropKeepRefs(h: Harness): Promise<void> {
  const refs = (await gitOut(h.root, ['for-each-ref', '--format=%(refname)', KEEP_PREFIX])).split('\n').filter(Boolean);
  for (const ref of refs) {
    const pid = Number(/^(\d+)-/.exec(ref.slice(KEEP_PREFIX.length))?.[1]);
    if (!processAlive(pid)) await git(h.root, ['update-ref', '-d', ref], { allowFail: true });
  }
}

/** Tips of `refs/heads/evo/*` by short branch name, and remote-tracking ones as `remote:evo/…`. */
export async function branchTips(h: Harness): Promise<Map<string, string>> {
  const out = await gitOut(h.root, ['for-each-ref', '--format=%(objectname) %(refname)', EVO_PREFIX, 'refs/remotes/']);
  const tips = new Map<string, string>();
  for (const line of out.split('\n')) {
    if (!line) continue;
    const [oid = '', ref = ''] = [line.slice(0, 40), line.slice(41)];
    if (ref.startsWith('refs/heads/')) tips.set(ref.slice(11), oid);
    else {
      const m = /^refs\/remotes\/[^/]+\/(evo\/.*)$/.exec(ref);
      if (m && !tips.has(`remote:${m[1]}`)) tips.set(`remote:${m[1]}`, oid);
    }
  }
  return tips;
}

async function commitInfo(h: Harness, rev: string): Promise<{ parents: string[]; message: string; trailers: Record<string, string> }> {
  const out = await gitOut(h.root, ['log', '-1', '--format=%P%x00%B', rev]);
  const [parents = '', message = ''] = out.split('\0');
  return { parents: parents.split(' ').filter(Boolean), message, trailers: parseTrailers(message) };
}

async function changedPaths(h: Harness, from: string, to: string): Promise<string[]> {
  return (await gitOut(h.root, ['diff-tree', '-r', '-z', '--no-renames', '--name-only', from, to])).split('\0').filter(Boolean);
}

function interventionFromTrailers(t: Record<string, string>, paths: string[]): Intervention {
  return {
    layer: (t['Evo-Layer'] ?? 'reward') as Layer,
    factor: t['Evo-Factor'] ?? paths[0] ?? '',
    description: t['Evo-Hypothesis'] ?? '',
    changedPaths: paths,
    frozen: [],
    rollbackPlan: `check out the parent ${t['Evo-Parent'] ?? ''}`.trim(),
    ...(t['Evo-Single-Factor-Override'] ? { singleFactorOverride: { reason: t['Evo-Single-Factor-Override'], by: 'unknown' } } : {}),
  };
}

// ---------------------------------------------------------------- version new

export interface NewVersionOptions {
  parent: string;
  hypothesis: string;
  targetMetric: string;
  success: string;
  layer: Layer;
  because?: string;
  factor?: string;
  slug?: string;
  worktree?: boolean;
}

export interface NewVersionResult {
  entry: LedgerEntry;
  worktree: string | null;
  repairs: string[];
}

export async function newVersion(h: Harness, o: NewVersionOptions): Promise<NewVersionResult> {
  if (!LAYERS.includes(o.layer)) throw new HarnessError(`unknown layer "${o.layer}"; use one of ${LAYERS.join(', ')}`);
  for (const [flag, v] of [['--hypothesis', o.hypothesis], ['--target-metric', o.targetMetric], ['--success', o.success]] as const) {
    if (!oneLine(v)) throw new HarnessError(`${flag} must not be empty: a version states one falsifiable hypothesis`);
  }
  const slug = o.slug ?? slugify(o.hypothesis);
  const repairs = await reconcile(h);
  let created!: LedgerEntry;
  await updateLedger(h, async (ledger) => {
    const parent = requireEntry(ledger, o.parent);
    if (parent.status === 'rejected') throw new HarnessError(`${parent.id} was rejected (${parent.rejectReason ?? 'see its evidence'}); branch from its parent ${parent.parent ?? ''} or the promoted version ${ledger.promoted?.version ?? ''} instead`);
    const n = Math.max(-1, ...[...ledger.entries.keys()].map(versionNumber)) + 1;
    const id = `v${n}` as VersionId;
    const branch = `evo/${id}-${slug}`;
    if (!(await validBranchName(h, branch))) throw new HarnessError(`"${branch}" is not a valid branch name (git check-ref-format); pass another --slug`);
    if (await revParse(h.root, `refs/heads/${branch}`)) throw new HarnessError(`branch ${branch} already exists but the ledger has no ${id}; rename or delete that branch, then rerun`);
    const hypothesis: Hypothesis = { change: oneLine(o.hypothesis), targetMetric: oneLine(o.targetMetric), because: oneLine(o.because ?? ''), successCriterion: oneLine(o.success) };
    created = {
      schema: 1,
      id,
      branch,
      parent: parent.id,
      base: parent.commit,
      commit: parent.commit,
      status: 'proposed',
      layer: o.layer,
      createdAt: nowIso(),
      hypothesis,
      intervention: o.factor ? { layer: o.layer, factor: o.factor, description: hypothesis.change, changedPaths: [], frozen: [], rollbackPlan: `check out ${parent.branch}` } : null,
      metrics: {},
      primaryMetric: parent.primaryMetric,
      transitions: [{ from: null, to: 'proposed', at: nowIso(), by: h.actor, evidence: [{ kind: 'note', summary: `hypothesis: ${hypothesis.change}; target ${hypothesis.targetMetric}; success: ${hypothesis.successCriterion}; layer ${o.layer}` }] }],
      decision: null,
    };
    return { entries: [created], message: `${id}: proposed from ${parent.id}\n\n${hypothesis.change}` };
  });
  const entry = created;
  await testPause('version-new:after-ledger');
  if (!(await casRef(h.root, `refs/heads/${entry.branch}`, entry.base, ZERO_OID, `evotrainer: ${entry.id} from ${entry.parent}`))) {
    throw new HarnessError(`could not create branch ${entry.branch}; the ledger has ${entry.id} — rerun any evotrainer command to restore the branch`);
  }
  const worktree = o.worktree ? await addWorktree(h, entry) : null;
  return { entry, worktree, repairs };
}

/** A worktree for a version under `.evotrainer/worktrees/vN` (ignored by git). */
export async function addWorktree(h: Harness, entry: LedgerEntry): Promise<string> {
  const dir = path.join(h.root, WORKTREES_DIR, entry.id);
  const existing = (await listWorktrees(h)).find((w) => w.branch === `refs/heads/${entry.branch}`);
  if (existing) return existing.path;
  if (existsSync(dir)) {
    await git(h.root, ['worktree', 'prune']);
    if (existsSync(dir) && statSync(dir).isDirectory()) throw new HarnessError(`${dir} exists but is not a worktree of ${entry.branch}; move it away, then rerun \`evotrainer version worktree ${entry.id}\``);
  }
  await git(h.root, ['worktree', 'add', '--quiet', dir, entry.branch]);
  return dir;
}

// ---------------------------------------------------------------- version commit

export interface CommitOptions {
  message?: string;
  overrideSingleFactor?: string;
  factor?: string;
}

export interface CommitResult {
  entry: LedgerEntry;
  worktree: string;
  factor: FactorCheck;
  changes: ChangeSet;
}

/** Where a version's branch is checked out (a version worktree or the main checkout). */
export async function checkoutOf(h: Harness, entry: LedgerEntry): Promise<string | null> {
  return (await listWorktrees(h)).find((w) => w.branch === `refs/heads/${entry.branch}`)?.path ?? null;
}

/**
 * Records the intervention of a proposed version: everything changed in the checkout
 * where its branch is checked out becomes ONE commit on the parent with the structured
 * trailers, after the action boundary and the single-factor rule passed. A refusal
 * changes nothing (the checks run against a throwaway index).
 */
export async function commitVersion(h: Harness, id: string, o: CommitOptions = {}): Promise<CommitResult> {
  await reconcile(h);
  const ledger = await readLedger(h);
  const entry = requireEntry(ledger, id);
  if (entry.status !== 'proposed') throw new HarnessError(`${id} is ${entry.status}; only a proposed version takes its intervention commit — start a new version with \`evotrainer version new --parent ${id}\``);
  if (entry.commit !== entry.base) throw new HarnessError(`${id} already has its intervention commit ${entry.commit.slice(0, 12)} (one single-factor commit per version); put a further change in a new version with --parent ${id}`);
  const wt = await checkoutOf(h, entry);
  if (!wt) throw new HarnessError(`${id} (${entry.branch}) is not checked out anywhere; run \`evotrainer version worktree ${id}\` (or \`git switch ${shQuote(entry.branch)}\`), make the change there, then rerun`);
  const wgit = (await gitOut(wt, ['rev-parse', '--path-format=absolute', '--git-dir'])).trim();
  const op = operationInProgress(wgit);
  if (op) throw new HarnessError(`a ${op} is in progress in ${wt}; ${OPERATION_NEXT_STEP[op]}, then rerun`);
  const head = await gitOut(wt, ['rev-parse', 'HEAD']);
  if (head !== entry.base) throw new HarnessError(`${entry.branch} has commits beyond its parent ${entry.parent}; fold them into the working tree (\`git -C "${wt}" reset --soft ${entry.base.slice(0, 12)}\`) and rerun, so the version is one commit`);

  // The candidate tree, built in a throwaway index: the user's index is untouched on refusal.
  const tmpIndex = path.join(wgit, `evotrainer-index-${process.pid}`);
  let tree: string;
  try {
    const env = { GIT_INDEX_FILE: tmpIndex };
    await git(wt, ['read-tree', 'HEAD'], { env });
    await git(wt, ['add', '-A', '--', '.'], { env });
    tree = await gitOut(wt, ['write-tree'], { env });
  } finally {
    rmSync(tmpIndex, { force: true });
  }
  if (tree === (await gitOut(h.root, ['rev-parse', `${entry.base}^{tree}`]))) throw new HarnessError(`no changes in ${wt} relative to ${entry.parent}; make the intervention there first`);

  const parentManifest = await manifestAt(h, entry.base);
  const changes = await analyzeChanges(h, entry.base, tree, parentManifest.eval_set?.path ?? null);
  const violations = checkBoundary(parentManifest, changes);
  if (violations.length) throw new BoundaryError(violations, `${id} on ${entry.branch}, rules of ${entry.parent}`);
  const factor = checkSingleFactor(changes, o.factor ?? entry.intervention?.factor ?? null);
  const override = o.overrideSingleFactor ? oneLine(o.overrideSingleFactor) : '';
  if (!factor.ok && !override) throw new SingleFactorError(factor);

  const layer = entry.layer;
  const hyp = entry.hypothesis!;
  const parentEntry = entry.parent ? ledger.entries.get(entry.parent) : undefined;
  const subject = oneLine(o.message ?? hyp.change).slice(0, 72);
  const trailers: [string, string][] = [
    ['Evo-Version', entry.id],
    ['Evo-Parent', entry.parent ?? ''],
    ['Evo-Hypothesis', hyp.change],
    ['Evo-Target-Metric', hyp.targetMetric],
    ['Evo-Success', hyp.successCriterion],
    ['Evo-Layer', layer],
    ['Evo-Factor', factor.factor ?? ''],
  ];
  if (!factor.ok) trailers.push(['Evo-Single-Factor-Override', override]);
  const body = [
    `${entry.id}: ${subject}`,
    '',
    hyp.because ? `Because: ${hyp.because}` : '',
    `Changed: ${factor.units.join(', ')}`,
    `Rollback: check out the parent ${entry.parent} (${parentEntry?.branch ?? entry.base.slice(0, 12)}).`,
    '',
    trailers.map(([k, v]) => `${k}: ${oneLine(v)}`).join('\n'),
  ].filter((l, i, a) => l !== '' || a[i - 1] !== '');
  await git(wt, ['add', '-A', '--', '.']);
  await git(wt, ['commit', '--quiet', '--cleanup=verbatim', '-F', '-'], { input: body.join('\n') + '\n', env: h.commitEnv });
  const commit = await gitOut(wt, ['rev-parse', 'HEAD']);
  if ((await gitOut(wt, ['rev-parse', 'HEAD^{tree}'])) !== tree) {
    // A hook or a concurrent edit changed what was committed: undo, keep the changes staged.
    await git(wt, ['reset', '--quiet', '--soft', entry.base]);
    throw new HarnessError(`the committed tree differs from the checked one (a commit hook or a concurrent edit in ${wt}?); the commit was undone, the changes stay staged — rerun`);
  }
  await testPause('version-commit:after-commit');
  const intervention: Intervention = {
    layer,
    factor: factor.factor ?? '',
    description: hyp.change,
    changedPaths: changes.files.map((f) => f.path),
    frozen: parentManifest.action_boundary?.frozen ?? [],
    rollbackPlan: `check out the parent ${entry.parent} (${parentEntry?.branch ?? entry.base})`,
    ...(factor.ok ? {} : { singleFactorOverride: { reason: override, by: h.actor } }),
  };
  let updated = entry;
  await updateLedger(h, (l) => {
    const cur = requireEntry(l, id);
    if (cur.commit !== cur.base) return null; // reconciled concurrently
    updated = { ...cur, commit, intervention };
    updated.transitions = cur.transitions.map((t, i) => (i === 0 ? { ...t, evidence: [...t.evidence, { kind: 'commit', summary: `intervention ${commit.slice(0, 12)}: ${factor.units.join(', ')}${factor.ok ? '' : ` (single-factor override: ${override})`}` }] } : t));
    return { entries: [updated], message: `${id}: intervention ${commit.slice(0, 12)}` };
  });
  return { entry: updated, worktree: wt, factor, changes };
}

// ---------------------------------------------------------------- lifecycle

const NEXT: Partial<Record<VersionStatus, VersionStatus>> = { proposed: 'backtested', backtested: 'training', training: 'evaluated' };

export interface AdvanceOptions {
  backtest?: string;
  health?: string;
  summary?: string;
  metrics?: Record<string, number>;
  job?: string;
}

const MAX_INLINE_EVIDENCE = 256 * 1024;

/** An evidence file, kept in the ledger when small (JSON parsed, text as is). */
export function readEvidenceFile(kind: Evidence['kind'], file: string, summary?: string): Evidence {
  if (!existsSync(file)) throw new HarnessError(`evidence file ${file} does not exist`);
  const text = readFileSync(file, 'utf8');
  let data: unknown = text;
  if (/\.json$/i.test(file)) {
    try {
      data = JSON.parse(text);
    } catch (e) {
      throw new HarnessError(`${file} is not valid JSON (${(e as Error).message}); fix it or pass a .md/.txt summary`);
    }
  }
  const big = text.length > MAX_INLINE_EVIDENCE;
  const auto = typeof data === 'object' && data !== null && 'summary' in data ? String((data as { summary: unknown }).summary) : text.split('\n').find((l) => l.trim())?.slice(0, 200) ?? '';
  return { kind, summary: summary ?? auto, source: path.basename(file), ...(big ? {} : { data }) };
}

export function parseMetrics(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^([A-Za-z_][\w.@-]*)\s*=\s*(-?\d+(?:\.\d+)?(?:e-?\d+)?)$/i.exec(part);
    if (!m) throw new HarnessError(`--metrics: "${part}" is not NAME=NUMBER (e.g. --metrics pass_rate=0.41,dead_group_ratio=0.27)`);
    out[m[1]!] = Number(m[2]);
  }
  return out;
}

/** proposed → backtested → training → evaluated, each with its evidence. */
export async function advanceVersion(h: Harness, id: string, to: VersionStatus, o: AdvanceOptions): Promise<LedgerEntry> {
  await reconcile(h);
  let result!: LedgerEntry;
  await updateLedger(h, async (ledger) => {
    const e = requireEntry(ledger, id);
    if (to === 'promoted' || to === 'rejected') throw new HarnessError(`use \`evotrainer ${to === 'promoted' ? 'promote' : 'reject'} ${id}\` for that decision`);
    if (NEXT[e.status] !== to) throw new HarnessError(`${id} is ${e.status}; the next state is ${NEXT[e.status] ?? '(none: it is decided)'}, not ${to} (proposed → backtested → training → evaluated → promoted | rejected)`);
    if (e.status === 'proposed' && e.commit === e.base) throw new HarnessError(`${id} has no intervention commit yet; make the change and run \`evotrainer version commit ${id}\` first`);
    const evidence: Evidence[] = [];
    if (o.backtest) evidence.push(readEvidenceFile('backtest', o.backtest, o.summary));
    if (o.health) evidence.push(readEvidenceFile('health', o.health));
    if (o.job) evidence.push({ kind: 'job', summary: `job ${o.job}`, source: o.job });
    const metrics = o.metrics ?? {};
    if (Object.keys(metrics).length) evidence.push({ kind: 'metrics', summary: Object.entries(metrics).map(([k, v]) => `${k}=${v}`).join(', '), data: metrics });
    if (o.summary && !o.backtest) evidence.push({ kind: 'note', summary: oneLine(o.summary) });
    const primary = e.primaryMetric ?? (await manifestAt(h, e.commit)).primary_metric ?? null;
    if (to === 'backtested' && !o.backtest && !o.summary) throw new HarnessError(`backtested needs its evidence: --backtest FILE (the backtest summary) or --summary "why it was not replayable"`);
    if (to === 'training' && !o.job && !o.summary) throw new HarnessError('training needs its evidence: --job ID (the training job) or --summary TEXT');
    if (to === 'evaluated' && (!primary || metrics[primary] === undefined)) throw new HarnessError(`evaluated needs the primary metric: --metrics ${primary ?? 'PRIMARY'}=VALUE[,other=VALUE] (and --health FILE for the health summary)`);
    const newMetrics = { ...e.metrics };
    for (const [k, v] of Object.entries(metrics)) newMetrics[to === 'backtested' ? `backtest.${k}` : k] = v;
    result = { ...e, status: to, metrics: newMetrics, primaryMetric: primary, transitions: [...e.transitions, { from: e.status, to, at: nowIso(), by: h.actor, evidence }] };
    return { entries: [result], message: `${id}: ${e.status} → ${to}\n\n${evidence.map((x) => `${x.kind}: ${x.summary}`).join('\n')}` };
  });
  return result;
}

/**
 * Evidence attached without a transition: the baseline's evaluation of the root version,
 * or a health report on a version still in flight. Decided versions keep their evidence.
 */
export async function attachEvidence(h: Harness, id: string, o: AdvanceOptions): Promise<LedgerEntry> {
  let result!: LedgerEntry;
  await updateLedger(h, (ledger) => {
    const e = requireEntry(ledger, id);
    if ((e.status === 'promoted' || e.status === 'rejected') && e.parent !== null) throw new HarnessError(`${id} is ${e.status}; evidence of a decided version is final (only the root version takes a baseline evaluation later)`);
    const evidence: Evidence[] = [];
    if (o.backtest) evidence.push(readEvidenceFile('backtest', o.backtest, o.summary));
    if (o.health) evidence.push(readEvidenceFile('health', o.health));
    if (o.metrics && Object.keys(o.metrics).length) evidence.push({ kind: 'metrics', summary: Object.entries(o.metrics).map(([k, v]) => `${k}=${v}`).join(', '), data: o.metrics });
    if (o.summary && !o.backtest) evidence.push({ kind: 'note', summary: oneLine(o.summary) });
    if (!evidence.length) throw new HarnessError('nothing to attach: pass --metrics, --health, --backtest or --summary');
    result = { ...e, metrics: { ...e.metrics, ...o.metrics }, transitions: [...e.transitions, { from: e.status, to: e.status, at: nowIso(), by: h.actor, evidence }] };
    return { entries: [result], message: `${id}: evidence (${evidence.map((x) => x.kind).join(', ')})` };
  });
  return result;
}

// ---------------------------------------------------------------- decisions (the gate decides: core/gate)

/**
 * evaluated → promoted: the ledger first (the version's status, the decision as its
 * evidence, the promoted line), then evo/promoted by compare-and-swap. `decide` runs inside
 * the ledger update with the entry and ledger as they are now, and returns the decision in
 * force or throws (nothing changed).
 */
export async function markPromoted(h: Harness, id: string, decide: (entry: LedgerEntry, ledger: Ledger) => Promise<GateDecision>): Promise<{ entry: LedgerEntry; decision: GateDecision; repairs: string[] }> {
  const repairs = await reconcile(h);
  let result!: { entry: LedgerEntry; decision: GateDecision };
  const before = await revParse(h.root, PROMOTED_REF);
  await updateLedger(h, async (ledger) => {
    const e = requireEntry(ledger, id);
    if (e.status === 'promoted' || e.status === 'rejected') throw new HarnessError(`${id} is already ${e.status}; decisions are final (make a new version)`);
    const decision = await decide(e, ledger);
    const entry: LedgerEntry = { ...e, status: 'promoted', decision, transitions: [...e.transitions, { from: e.status, to: 'promoted', at: nowIso(), by: h.actor, evidence: [{ kind: 'gate', summary: decision.reasons.map((r) => `${r.passed ? 'ok' : 'FAIL'} ${r.check}`).join('; '), data: decision }] }] };
    const promoted: PromotedLine = {
      version: entry.id,
      commit: entry.commit,
      history: [...(ledger.promoted?.history ?? []), { version: entry.id, commit: entry.commit, at: nowIso(), by: h.actor, fastForward: true }],
    };
    result = { entry, decision };
    return { entries: [entry], promoted, message: `${id}: ${e.status} → promoted (${decision.decidedBy})\n\n${decision.reasons.map((r) => `${r.passed ? 'ok' : 'FAIL'} ${r.check}: ${r.detail}`).join('\n')}` };
  });
  const r = result;
  await testPause('promote:after-ledger');
  if (!(await casRef(h.root, PROMOTED_REF, r.entry.commit, before ?? ZERO_OID, `evotrainer: promote ${id}`))) {
    throw new HarnessError(`evo/promoted moved while promoting ${id}; the ledger records the promotion — run \`evotrainer lineage\` to check and rerun \`evotrainer promote ${id}\` if needed`);
  }
  return { ...r, repairs };
}

export async function rejectVersion(h: Harness, id: string, reason: string, by: GateDecision['decidedBy'] = 'human'): Promise<LedgerEntry> {
  if (!oneLine(reason)) throw new HarnessError('--reason must say why (it is the negative evidence others will read)');
  await reconcile(h);
  let result!: LedgerEntry;
  await updateLedger(h, (ledger) => {
    const e = requireEntry(ledger, id);
    if (e.status === 'promoted' || e.status === 'rejected') throw new HarnessError(`${id} is already ${e.status}; decisions are final`);
    const decision: GateDecision = { version: e.id, gate: 'promotion', decision: 'reject', reasons: [{ check: by === 'human' ? 'human decision' : 'gate decision', passed: false, detail: oneLine(reason) }], decidedAt: nowIso(), decidedBy: by };
    result = { ...e, status: 'rejected', decision, rejectReason: oneLine(reason), transitions: [...e.transitions, { from: e.status, to: 'rejected', at: nowIso(), by: h.actor, evidence: [{ kind: 'gate', summary: `rejected: ${oneLine(reason)}`, data: decision }] }] };
    return { entries: [result], message: `${id}: ${e.status} → rejected\n\n${oneLine(reason)}` };
  });
  return result;
}

/** Resolves `vN` to its ledger entry, or any other argument to a commit. */
export async function resolveRev(h: Harness, arg: string): Promise<{ label: string; commit: string }> {
  if (/^v\d+$/.test(arg)) {
    const e = requireEntry(await readLedger(h), arg);
    return { label: `${arg} (${e.branch})`, commit: e.commit };
  }
  const c = await revParse(h.root, `${arg}^{commit}`);
  if (!c) throw new HarnessError(`"${arg}" is neither a version (vN) nor a commit/branch of ${h.root}`);
  return { label: arg, commit: c };
}

export async function dirtyCheckout(dir: string): Promise<string[]> {
  return dirtyPaths(dir);
}
