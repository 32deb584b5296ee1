import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { recordBacktest, runBacktest } from '../backtest/backtest';
import { decideAndApply, formatGate, HONEST_SUFFIX, promoteVersion, rejectionReason } from '../gate';
import { diagnose, type Diagnosis } from '../diagnose/diagnose';
import type { HealthReport } from '../diagnose/health';
import { computeUserMetrics, parseUserMetric } from '../diagnose/userDiagnostics';
import { analyzeChanges } from '../harness/changes';
import { git, gitOut } from '../harness/git';
import { readLedger, requireEntry, updateLedger, versionNumber, type LedgerEntry } from '../harness/ledger';
import { HarnessError, manifestAt, nowIso, type Harness } from '../harness/repo';
import { applySkill, listSkills, recordSkill, renderSkill, skillsDir, type LoadedSkill } from '../harness/skills';
import { advanceVersion, commitVersion, newVersion, rejectVersion } from '../harness/versions';
import { fetchOutputs, LOCAL_PROFILE, recordsFor, submitJob, waitForJob, type JobRecords, type NamedProfile } from '../jobs';
import type { Layer, SkillCategory } from '../model';
import type { RolloutStore } from '../store/store';
import { SkillProposer, type KeySet, type Proposal, type Proposer } from './proposers';

/**
 * `evotrainer evolve`: the nine steps of METHOD.md in rounds. Each round: evidence →
 * score / signal / behavior layers (health, rules) → one hypothesis → one single-factor
 * version → backtest (and its gate) → training job → eval rollouts into the store →
 * promotion gate → promote (and distil a skill) or reject (negative evidence).
 *
 * Everything the loop knows lives in git (versions, ledger, skills) and the store (eval
 * rollouts), and every job carries an idempotency key: killed at any step, a rerun picks
 * up the version in flight where its ledger status says it stopped, and a finished job is
 * found again, never run twice.
 */

export type Autonomy = 'full' | 'human_gated';
export type HumanGateKind = 'diagnosis' | 'design' | 'backtest' | 'completion';
export type GateAnswer = { answer: 'APPROVE' } | { answer: 'REVISE'; feedback: string } | { answer: 'ABORT' };

export interface HumanGate {
  id: string;
  gate: HumanGateKind;
  version: string | null;
  summary: string;
  evidence: string;
  askedAt: string;
}

export interface EvolveBudget {
  rounds?: number;
  versions?: number;
  wallMinutes?: number;
  gpuHours?: number;
}

export interface EvolveOptions {
  store: RolloutStore;
  budget?: EvolveBudget;
  autonomy?: Autonomy;
  proposer?: Proposer;
  /** Cluster profile training runs on (default: the manifest's, else local). */
  profile?: NamedProfile;
  /** Running harness code (backtests, training) needs the user's consent. */
  trust: boolean;
  /** More skill folders to draw from (another harness's skills/, a shared library). */
  skillDirs?: string[];
  /** Asks a person at a human gate; null = nobody is here: the gate is left pending. */
  ask?: ((g: HumanGate) => Promise<GateAnswer>) | null;
  log?: (line: string) => void;
  records?: JobRecords;
  signal?: AbortSignal;
  /** Training job's time limit. */
  jobMinutes?: number;
}

export interface EvolveResult {
  rounds: number;
  versions: string[];
  promoted: string;
  stopped: 'budget' | 'no-proposal' | 'aborted' | 'pending-gate' | 'rounds';
  pending?: HumanGate;
  log: string[];
}

export class PendingGateError extends HarnessError {
  constructor(readonly gate: HumanGate) {
    super(`waiting for a person at the ${gate.gate} gate${gate.version ? ` of ${gate.version}` : ''}: ${gate.summary}\nAnswer with \`evotrainer evolve answer APPROVE\`, \`… REVISE "feedback"\` or \`… ABORT\` (or from the editor: EvoTrainer: Answer Pending Gate), then rerun \`evotrainer evolve\`.`);
  }
}

// ---------------------------------------------------------------- pending gates (a file each, answered from anywhere)

const evolveDir = (h: Harness) => path.join(h.root, '.evotrainer', 'evolve');

function writeAtomic(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

export function pendingGate(h: Harness): HumanGate | null {
  const f = path.join(evolveDir(h), 'pending.json');
  return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as HumanGate) : null;
}

/** Records a person's answer to the pending gate; the next `evolve` run reads it. */
export function answerGate(h: Harness, answer: GateAnswer): HumanGate {
  const g = pendingGate(h);
  if (!g) throw new HarnessError('no gate is waiting for an answer (nothing pending in .evotrainer/evolve)');
  if (answer.answer === 'REVISE' && !answer.feedback.trim()) throw new HarnessError('REVISE needs the feedback the proposer should follow');
  writeAtomic(path.join(evolveDir(h), 'answers', `${g.id}.json`), JSON.stringify({ ...answer, gate: g.id, at: nowIso() }));
  rmSync(path.join(evolveDir(h), 'pending.json'), { force: true });
  return g;
}

function storedAnswer(h: Harness, id: string): GateAnswer | null {
  const f = path.join(evolveDir(h), 'answers', `${id}.json`);
  return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as GateAnswer) : null;
}

// ---------------------------------------------------------------- helpers

const CATEGORY: Partial<Record<Layer, SkillCategory>> = { reward: 'reward_design', filter: 'filter_mechanism', signal: 'filter_mechanism', environment: 'evaluation_protocol', diagnostics: 'evaluation_protocol', infra: 'training_stability', data: 'training_stability', behavior: 'reward_design' };

function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split('.');
  let o = obj;
  for (const p of parts.slice(0, -1)) {
    if (typeof o[p] !== 'object' || o[p] === null) o[p] = {};
    o = o[p] as Record<string, unknown>;
  }
  o[parts.at(-1)!] = value;
}

async function evalMetrics(store: RolloutStore, version: string): Promise<Record<string, number>> {
  const row = await store.one<{ raw: number | null; honest: number | null; n: number }>(
    `select avg(correct::int) filter (where coalesce(data_source, '') not like '%${HONEST_SUFFIX}') as raw,
            avg(correct::int) filter (where coalesce(data_source, '') like '%${HONEST_SUFFIX}') as honest, count(*)::int as n
       from rollouts where version = ? and split = 'val'`,
    [version],
  );
  const out: Record<string, number> = {};
  if (row?.raw !== null && row?.raw !== undefined) out.pass_rate = Number(row.raw.toFixed(6));
  if (row?.honest !== null && row?.honest !== undefined) out.honest_pass_rate = Number(row.honest.toFixed(6));
  return out;
}

/** The loop's state, re-read from git and the store every round: nothing is cached in memory. */
export class Evolution {
  private readonly lines: string[] = [];
  private readonly t0 = Date.now();
  private autonomy: Autonomy;
  private consecutiveFailures = 0;
  private readonly avoidLayers: Layer[] = [];
  private preferSubtraction = false;
  private readonly records: JobRecords;
  /** Stored gate answers this run has acted on. */
  private readonly consumed = new Set<string>();

  constructor(
    private readonly h: Harness,
    private readonly o: EvolveOptions,
  ) {
    this.autonomy = o.autonomy ?? 'full';
    this.records = recordsFor(h.root, o.records);
  }

  log(line: string): void {
    const stamped = `[${((Date.now() - this.t0) / 1000).toFixed(1).padStart(6)}s] ${line}`;
    this.lines.push(stamped);
    this.o.log?.(stamped);
  }

  private async human(gate: HumanGateKind, version: string | null, summary: string, evidence: string): Promise<GateAnswer> {
    if (this.autonomy !== 'human_gated') return { answer: 'APPROVE' };
    const ledger = await readLedger(this.h);
    const manifest = await manifestAt(this.h, ledger.promoted!.commit);
    if (manifest.gates && manifest.gates[gate] === false) return { answer: 'APPROVE' };
    // Round gates are named after the version the round will make; a REVISE asks again under the next name.
    const base = version ? `${version}-${gate}` : `before-v${Math.max(-1, ...[...ledger.entries.keys()].map(versionNumber)) + 1}-${gate}`;
    let id = base;
    for (let k = 2; ; k++) {
      const stored = storedAnswer(this.h, id);
      if (!stored) break;
      if (!this.consumed.has(id)) {
        this.consumed.add(id);
        this.log(`${gate} gate${version ? ` of ${version}` : ''}: ${stored.answer}${stored.answer === 'REVISE' ? `: ${stored.feedback}` : ''} (answered)`);
        return stored;
      }
      id = `${base}-${k}`;
    }
    const g: HumanGate = { id, gate, version, summary, evidence, askedAt: nowIso() };
    if (!this.o.ask) {
      writeAtomic(path.join(evolveDir(this.h), 'pending.json'), JSON.stringify(g, null, 2));
      throw new PendingGateError(g);
    }
    const a = await this.o.ask(g);
    this.consumed.add(id);
    writeAtomic(path.join(evolveDir(this.h), 'answers', `${id}.json`), JSON.stringify({ ...a, gate: id, at: nowIso() }));
    this.log(`${gate} gate${version ? ` of ${version}` : ''}: ${a.answer}${a.answer === 'REVISE' ? `: ${a.feedback}` : ''}`);
    return a;
  }

  private async health(version: string, split?: 'train' | 'val'): Promise<HealthReport> {
    return (await this.diagnosis(version, { split, parts: 'health' })).health;
  }

  /**
   * A version's diagnosis under its own manifest's thresholds, with the harness's metric
   * and rule files (its script metrics run: evolve has the user's consent to run harness code).
   */
  private async diagnosis(version: string, opts: { split?: 'train' | 'val'; parts?: 'health' | 'all'; seriesSplit?: 'train' | 'val' }): Promise<Diagnosis> {
    const manifest = await manifestAt(this.h, requireEntry(await readLedger(this.h), version).commit);
    const scope = { version, ...(opts.split ? { split: opts.split } : {}) };
    return diagnose(this.o.store, { harness: this.h.root, manifest, scope, trust: this.o.trust, parts: opts.parts, ...(opts.seriesSplit ? { seriesScope: { ...scope, split: opts.seriesSplit } } : {}) });
  }

  private profile(): NamedProfile {
    return this.o.profile ?? LOCAL_PROFILE;
  }

  /** Trains (and evaluates) a version through the job engine, keyed so a rerun finds the same job. */
  private async train(e: LedgerEntry): Promise<{ jobId: string; gpuHours: number }> {
    const job = await submitJob({ profile: this.profile(), harness: this.h.root, commit: e.commit, version: e.id, run: `train-${e.id}`, templateName: 'train', key: `evolve:train:${e.id}:${e.commit}`, outputs: ['rollout_data', 'validation_data', 'metrics.json', 'log'], records: this.records, timeoutMinutes: this.o.jobMinutes });
    this.log(`${e.id}: training job ${job.id} on ${this.profile().name} (${job.state})`);
    const final = await waitForJob(job.id, { records: this.records, signal: this.o.signal, pollMs: 500 });
    if (final.state !== 'completed') {
      throw new HarnessError(`${e.id}: training job ${job.id} ended ${final.state}${final.failure ? `: ${final.failure.message}\n${final.failure.logTail}\nnext: ${final.failure.nextStep}` : ''}`);
    }
    const dir = path.join(this.h.root, '.evotrainer', 'runs', e.id);
    await fetchOutputs(job.id, dir, { records: this.records });
    const summary = await this.o.store.import([dir], { run: `train-${e.id}`, version: e.id });
    this.log(`${e.id}: job ${job.id} completed in ${final.elapsedSeconds ?? '?'} s; imported ${summary.rollouts} rollouts (${summary.files.filter((f) => f.status === 'imported').length} new files)`);
    return { jobId: job.id, gpuHours: final.gpuHours ?? 0 };
  }

  /** The baseline needs its own evaluation before anything is compared with it. */
  private async ensureBaseline(): Promise<void> {
    const ledger = await readLedger(this.h);
    const root = [...ledger.entries.values()].find((e) => e.parent === null)!;
    const n = (await this.o.store.one<{ n: number }>(`select count(*)::int as n from rollouts where version = ? and split = 'val'`, [root.id]))?.n ?? 0;
    if (n) return;
    this.log(`${root.id}: no evaluation yet — training and evaluating the baseline`);
    await this.train(root);
    const metrics = await evalMetrics(this.o.store, root.id);
    await updateLedger(this.h, (l) => {
      const e = requireEntry(l, root.id);
      return { entries: [{ ...e, metrics: { ...e.metrics, ...metrics }, transitions: [...e.transitions, { from: e.status, to: e.status, at: nowIso(), by: this.h.actor, evidence: [{ kind: 'metrics', summary: Object.entries(metrics).map(([k, v]) => `${k}=${v}`).join(', '), data: metrics }] }] }], message: `${root.id}: baseline evaluation` };
    });
    this.log(`${root.id}: baseline ${Object.entries(metrics).map(([k, v]) => `${k} ${v.toFixed(3)}`).join(', ')}`);
  }

  private skills(): LoadedSkill[] {
    const seen = new Set<string>();
    const out: LoadedSkill[] = [];
    for (const [i, dir] of [skillsDir(this.h), ...(this.o.skillDirs ?? [])].entries()) {
      const { skills, problems } = listSkills(i === 0 ? { harness: dir } : { library: dir });
      for (const p of problems) this.log(`skills: ${p}`);
      for (const s of skills) {
        if (seen.has(s.record.id)) continue;
        seen.add(s.record.id);
        out.push(s);
      }
    }
    return out;
  }

  /** Creates the version a proposal describes: one commit on a new branch from the promoted version. */
  private async materialize(p: Proposal, parent: LedgerEntry): Promise<string> {
    if (p.change.kind === 'skill-patch') {
      const r = await applySkill(this.h, p.skill!, { onto: parent.id, worktree: true });
      if (r.outcome !== 'clean') throw new HarnessError(`skill ${p.skill!.record.id} did not apply on ${parent.id}: ${r.outcome} — ${r.next}`);
      return r.version;
    }
    const v = await newVersion(this.h, { parent: parent.id, hypothesis: p.hypothesis, targetMetric: p.targetMetric, success: p.success, layer: p.layer, because: p.because, worktree: true, ...(p.change.kind === 'keys' && p.change.set.length === 1 ? { factor: `${p.change.set[0]!.file}:${p.change.set[0]!.key}` } : {}) });
    const wt = v.worktree!;
    if (p.change.kind === 'keys') {
      for (const k of p.change.set) {
        const file = path.join(wt, k.file);
        if (!existsSync(file)) throw new HarnessError(`${k.file} does not exist in ${parent.id}; the intervention ${k.key} = ${JSON.stringify(k.value)} cannot be applied here`);
        const obj = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
        setKey(obj, k.key, k.value);
        writeFileSync(file, JSON.stringify(obj, null, 2) + '\n');
      }
    } else {
      const patch = path.join(this.h.root, '.evotrainer', 'patches', `${v.entry.id}.patch`);
      mkdirSync(path.dirname(patch), { recursive: true });
      writeFileSync(patch, p.change.diff.endsWith('\n') ? p.change.diff : p.change.diff + '\n');
      await git(wt, ['apply', '--recount', patch]);
    }
    await commitVersion(this.h, v.entry.id, { message: p.hypothesis });
    if (p.skill) {
      await updateLedger(this.h, (l) => {
        const e = requireEntry(l, v.entry.id);
        return { entries: [{ ...e, skill: { id: p.skill!.record.id, sourceCommit: p.skill!.record.intervention.source.commit } }], message: `${e.id}: from skill ${p.skill!.record.id}` };
      });
    }
    return v.entry.id;
  }

  /** Records a promoted version as a skill (or its evidence on the skill it came from), with its config keys as parameters. */
  private async distil(e: LedgerEntry, trigger: string): Promise<void> {
    try {
      const { skill, created } = await recordSkill(this.h, { from: e.id, category: CATEGORY[e.layer] ?? 'reward_design', trigger, library: this.o.skillDirs?.[0] });
      const keys = (await analyzeChanges(this.h, e.base, e.commit, null)).keys.filter((k) => /\.json$/.test(k.file)).map((k): KeySet => ({ file: k.file, key: k.key, value: k.after }));
      if (keys.length && !skill.record.intervention.parameters.set) {
        const record = { ...skill.record, intervention: { ...skill.record.intervention, parameters: { ...skill.record.intervention.parameters, set: keys } } };
        writeFileSync(skill.file, renderSkill(record));
      }
      this.log(`${e.id}: ${created ? 'recorded skill' : 'added evidence to skill'} ${skill.record.id} (${path.relative(this.h.root, skill.file)}; domains ${skill.record.domains.join(', ')})`);
      await this.commitSkillFile(skill.file, `skill ${skill.record.id}: ${created ? 'recorded from' : 'evidence from'} ${e.id}`);
    } catch (err) {
      this.log(`${e.id}: no skill recorded: ${(err as Error).message}`);
    }
  }

  /**
   * A skill file the loop wrote inside the harness is committed on the checked-out branch (that
   * file only), so a run leaves the checkout clean; a library outside the harness is left to its owner.
   */
  private async commitSkillFile(file: string, message: string): Promise<void> {
    const rel = path.relative(this.h.root, file);
    if (rel.startsWith('..') || path.isAbsolute(rel)) return;
    const branch = await git(this.h.root, ['symbolic-ref', '-q', '--short', 'HEAD'], { allowFail: true });
    if (branch.code !== 0) {
      this.log(`${rel} left uncommitted: the checkout is not on a branch (commit it yourself)`);
      return;
    }
    await git(this.h.root, ['add', '--', rel]);
    const r = await git(this.h.root, ['commit', '--quiet', '--only', '-m', message, '--', rel], { allowFail: true, env: this.h.commitEnv });
    if (r.code !== 0 && !/nothing (added )?to commit|no changes added/.test(`${r.stdout}${r.stderr}`)) this.log(`${rel} left uncommitted: ${r.stderr.trim()}`);
  }

  /** Takes one version from wherever its status says it stopped to promoted or rejected. */
  private async drive(id: string, trigger: string | null): Promise<'promoted' | 'rejected' | 'aborted'> {
    let e = requireEntry(await readLedger(this.h), id);
    if (e.status === 'proposed') {
      const report = await runBacktest(this.h, this.o.store, { version: id, trust: this.o.trust });
      e = await recordBacktest(this.h, report);
      this.log(`${id}: backtest ${report.verdict.toUpperCase()} [${report.kinds.join(', ')}] ${report.reasons.join('; ')}`);
      if (report.verdict === 'fail') {
        await rejectVersion(this.h, id, `backtest gate: ${report.reasons.join('; ')}`, 'gate');
        this.log(`${id}: REJECTED before any training (backtest gate); kept as negative evidence`);
        return 'rejected';
      }
      const a = await this.human('backtest', id, report.summary, report.reasons.join('\n'));
      if (a.answer === 'ABORT') return 'aborted';
      if (a.answer === 'REVISE') {
        await rejectVersion(this.h, id, `revised at the backtest gate: ${a.feedback}`);
        return 'rejected';
      }
    }
    if (e.status === 'backtested') {
      e = await advanceVersion(this.h, id, 'training', { summary: `training job (key evolve:train:${id})` });
    }
    if (e.status === 'training') {
      const { jobId } = await this.train(e);
      const metrics = await evalMetrics(this.o.store, id);
      if (!metrics.pass_rate && metrics.pass_rate !== 0) throw new HarnessError(`${id}: the training job wrote no evaluation (validation_data); check its log (\`evotrainer job logs ${jobId}\`)`);
      e = await advanceVersion(this.h, id, 'evaluated', { metrics, job: jobId });
      this.log(`${id}: evaluated ${Object.entries(metrics).map(([k, v]) => `${k} ${v.toFixed(3)}`).join(', ')}`);
    }
    if (e.status === 'evaluated') {
      let revised = false;
      let aborted = false;
      let why = '';
      const r = await decideAndApply(this.h, this.o.store, {
        version: id,
        judge: 'eval_rollouts',
        act: async (g) => {
          for (const line of formatGate(g).split('\n')) this.log(line);
          const a = await this.human('completion', id, `gate: ${g.decision}`, formatGate(g));
          if (a.answer === 'ABORT') {
            aborted = true;
            return { act: 'none' };
          }
          if (a.answer === 'REVISE') {
            revised = true;
            why = `revised at the completion gate: ${a.feedback}`;
            return { act: 'reject', reason: why, by: 'human' };
          }
          if (g.decision === 'promote') return { act: 'promote' };
          why = g.decision === 'needs_human' ? `inconclusive (within noise; autonomous run): ${g.checks.filter((c) => c.passed !== true).map((c) => `${c.check}: ${c.detail}`).join(' | ')}` : rejectionReason(g);
          return { act: 'reject', reason: why, by: 'gate' };
        },
      });
      if (aborted) return 'aborted';
      if (r.applied === 'promoted') {
        this.log(`${id}: PROMOTED (evo/promoted → ${e.commit.slice(0, 12)})`);
        await this.distil(r.entry, trigger ?? e.hypothesis?.successCriterion ?? 'manual');
        return 'promoted';
      }
      this.log(`${id}: REJECTED — ${why}`);
      const g = r.report!;
      if (revised || g.decision === 'reject') await this.reviseDiagnostics(id, g.checks.filter((c) => c.category === 'validity' && c.passed === false).map((c) => c.check));
      return 'rejected';
    }
    return e.status === 'promoted' ? 'promoted' : 'rejected';
  }

  /**
   * The "revise diagnostics" sub-loop (METHOD.md): when no metric explains a failure — no
   * health alert on the rejected version that the promoted one did not have, and no failed
   * validity check naming one — try the candidate diagnostics the harness keeps under
   * `diagnostics/proposed/`. One that separates the promoted from the rejected versions,
   * replayed over all of them, joins the harness as a diagnostics version; one that does
   * not stays out, and the log says so.
   */
  private async reviseDiagnostics(failed: string, failedValidity: string[]): Promise<void> {
    const ledger = await readLedger(this.h);
    const promoted = requireEntry(ledger, ledger.promoted!.version);
    const [hf, hp] = [await this.health(failed, 'val'), await this.health(promoted.id, 'val')];
    const before = new Map(hp.metrics.map((m) => [m.name, m.status]));
    const newAlerts = hf.alerts.filter((m) => (before.get(m.name) ?? 'ok') === 'ok').map((m) => m.name);
    const validity = failedValidity;
    if (newAlerts.length || validity.length) {
      const parts = [...(validity.length ? [`the failed validity check${validity.length > 1 ? 's' : ''} ${validity.map((v) => `"${v}"`).join(', ')}`] : []), ...(newAlerts.length ? [`new alerts on ${newAlerts.join(', ')}`] : [])];
      this.log(`${failed}: its failure is explained by ${parts.join(' and ')}; no new diagnostic needed`);
      return;
    }
    const listed = (await gitOut(this.h.root, ['ls-tree', '--name-only', `${promoted.commit}:diagnostics/proposed`]).catch(() => '')).split('\n').filter((f) => /\.(sql|py)$/.test(f));
    const have = new Set((await gitOut(this.h.root, ['ls-tree', '--name-only', `${promoted.commit}:diagnostics/metrics`]).catch(() => '')).split('\n'));
    const candidates = listed.filter((f) => !have.has(f));
    if (!candidates.length) {
      this.log(`${failed}: no metric explains this failure and no candidate diagnostic is left under diagnostics/proposed/ — read its rollouts (failure explorer) and write one`);
      return;
    }
    const decided = [...ledger.entries.values()].filter((x) => x.status === 'promoted' || x.status === 'rejected');
    for (const file of candidates) {
      const text = await gitOut(this.h.root, ['show', `${promoted.commit}:diagnostics/proposed/${file}`]);
      const { metric } = parseUserMetric(`diagnostics/proposed/${file}`, text);
      if (!metric || metric.script) continue;
      const values: { id: string; status: string; value: number }[] = [];
      for (const v of decided) {
        const { results } = await computeUserMetrics(this.o.store, [metric], { version: v.id, split: 'val' });
        const value = results[0]?.value;
        if (value !== null && value !== undefined) values.push({ id: v.id, status: v.status, value });
      }
      const good = values.filter((x) => x.status === 'promoted').map((x) => x.value);
      const bad = values.filter((x) => x.status === 'rejected').map((x) => x.value);
      const fmt = (xs: number[]) => xs.map((x) => x.toFixed(3)).join(', ');
      const separates = good.length > 0 && bad.length > 0 && (Math.min(...good) > Math.max(...bad) || Math.max(...good) < Math.min(...bad));
      this.log(`${failed}: no metric explains it; candidate diagnostic ${metric.name} replayed over ${values.length} decided versions: promoted [${fmt(good)}], rejected [${fmt(bad)}] — ${separates ? 'separates them' : 'does not separate them'}`);
      if (!separates) continue;
      const v = await newVersion(this.h, { parent: promoted.id, hypothesis: `If we add the diagnostic ${metric.name}, failures like ${failed} are caught because it separates promoted from rejected versions`, targetMetric: metric.name, success: `${metric.name} > -1`, layer: 'diagnostics', worktree: true });
      const target = path.join(v.worktree!, 'diagnostics', 'metrics', file);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, text);
      await commitVersion(this.h, v.entry.id, { message: `diagnostics: add ${metric.name}` });
      const report = await runBacktest(this.h, this.o.store, { version: v.entry.id, trust: this.o.trust });
      await recordBacktest(this.h, report);
      if (report.verdict !== 'pass') {
        await rejectVersion(this.h, v.entry.id, `retrospective validation failed: ${report.reasons.join('; ')}`, 'gate');
        this.log(`${v.entry.id}: diagnostic ${metric.name} REJECTED — ${report.reasons.join('; ')}`);
        continue;
      }
      await promoteVersion(this.h, v.entry.id, { override: `diagnostics only (no training): validated retrospectively — ${report.reasons.join('; ')}` });
      this.log(`${v.entry.id}: diagnostic ${metric.name} joins the harness (validated retrospectively; evo/promoted → ${v.entry.id})`);
      return;
    }
  }

  private gpuHoursUsed(): number {
    return this.records
      .list().reduce((s, r) => s + (r.gpuHours ?? 0), 0);
  }

  async run(): Promise<EvolveResult> {
    const budget = this.o.budget ?? {};
    const maxRounds = budget.rounds ?? 3;
    if (!this.o.trust) throw new HarnessError("evolve runs this harness's own code (backtests, training jobs); pass --trust to allow it (in the editor: trust the workspace)");
    const created: string[] = [];
    await this.ensureBaseline();
    let rounds = 0;
    let stopped: EvolveResult['stopped'] = 'rounds';
    let feedback: string | undefined;
    while (rounds < maxRounds) {
      if (this.o.signal?.aborted) {
        stopped = 'aborted';
        break;
      }
      if (budget.wallMinutes && (Date.now() - this.t0) / 60_000 > budget.wallMinutes) {
        this.log(`budget: wall time ${budget.wallMinutes} min spent`);
        stopped = 'budget';
        break;
      }
      if (budget.gpuHours !== undefined && this.gpuHoursUsed() >= budget.gpuHours) {
        this.log(`budget: ${this.gpuHoursUsed().toFixed(2)} GPU-hours of ${budget.gpuHours} spent`);
        stopped = 'budget';
        break;
      }
      const ledger = await readLedger(this.h);
      const entries = [...ledger.entries.values()].sort((a, b) => versionNumber(a.id) - versionNumber(b.id));
      // A version in flight (killed mid-step, or a person's commit on its branch) is finished first.
      const inflight = entries.find((e) => !['promoted', 'rejected'].includes(e.status) && e.parent !== null && !(e.status === 'proposed' && e.commit === e.base));
      let id: string;
      let trigger: string | null = null;
      rounds++;
      if (inflight) {
        id = inflight.id;
        this.log(`round ${rounds}: resuming ${id} (${inflight.status}) — ${inflight.hypothesis?.change ?? ''}`);
      } else {
        if (budget.versions !== undefined && created.length >= budget.versions) {
          this.log(`budget: ${budget.versions} version(s) made`);
          stopped = 'budget';
          break;
        }
        const promoted = requireEntry(ledger, ledger.promoted!.version);
        // Trends over the training rollouts: one point per step range of the promoted version's run.
        const { health, findings } = await this.diagnosis(promoted.id, { seriesSplit: 'train' });
        const sinceIdx = entries.findIndex((e) => e.id === promoted.id);
        const rejectedSince = entries.filter((e, i) => i > sinceIdx && e.status === 'rejected');
        const rejectedHealth = [];
        for (const r of rejectedSince.slice(-3)) rejectedHealth.push({ entry: r, health: await this.health(r.id, 'val') });
        this.log(`round ${rounds}: diagnosing ${promoted.id} (promoted): ${health.rollouts} rollouts; alerts: ${health.alerts.map((m) => `${m.name} ${m.value?.toFixed(3)} ${m.status}`).join(', ') || 'none'}; findings: ${findings.map((f) => `${f.rule} ${f.title}`).join('; ') || 'none'}`);
        const d = await this.human('diagnosis', null, `${findings.length} finding(s) on ${promoted.id}`, findings.map((f) => `${f.rule}: ${f.title}`).join('\n'));
        if (d.answer === 'ABORT') {
          stopped = 'aborted';
          break;
        }
        const proposer = this.o.proposer ?? new SkillProposer();
        const proposal = await proposer.propose({ harness: this.h, promoted, health, rejectedHealth, findings, entries, skills: this.skills(), avoidLayers: this.avoidLayers, preferSubtraction: this.preferSubtraction, feedback: feedback ?? (d.answer === 'REVISE' ? d.feedback : undefined) });
        feedback = undefined;
        if (!proposal) {
          this.log(`round ${rounds}: no proposal — no skill's trigger holds on the evidence (${proposer.name} proposer); stopping`);
          stopped = 'no-proposal';
          break;
        }
        for (const line of proposal.explanation.split('\n')) this.log(`  ${line}`);
        const design = await this.human('design', null, proposal.hypothesis, proposal.explanation);
        if (design.answer === 'ABORT') {
          stopped = 'aborted';
          break;
        }
        if (design.answer === 'REVISE') {
          feedback = design.feedback;
          rounds--;
          continue;
        }
        id = await this.materialize(proposal, promoted);
        created.push(id);
        trigger = proposal.trigger ?? null;
        this.log(`round ${rounds}: ${id} from ${promoted.id} [${proposal.layer}] "${proposal.hypothesis}" — success: ${proposal.success}`);
      }
      const outcome = await this.drive(id, trigger);
      if (outcome === 'aborted') {
        stopped = 'aborted';
        break;
      }
      if (outcome === 'promoted') {
        this.consecutiveFailures = 0;
        this.avoidLayers.length = 0;
        this.preferSubtraction = false;
      } else {
        this.consecutiveFailures++;
        await this.escalate(id);
      }
    }
    const final = await readLedger(this.h);
    this.log(`done: ${rounds} round(s), versions ${created.join(', ') || 'none'}; promoted line at ${final.promoted!.version}`);
    return { rounds, versions: created, promoted: final.promoted!.version, stopped, log: this.lines };
  }

  /** METHOD.md escalation: after 2 consecutive failures a person gates; after 3, re-check, switch layer, subtract, roll back. */
  private async escalate(failed: string): Promise<void> {
    const n = this.consecutiveFailures;
    if (n === 2 && this.autonomy === 'full') {
      this.autonomy = 'human_gated';
      this.log(`escalation: 2 consecutive failed versions — switching to human-gated (gates after diagnosis, design, backtest, completion)`);
    }
    if (n >= 3) {
      const ledger = await readLedger(this.h);
      const e = requireEntry(ledger, failed);
      const promoted = requireEntry(ledger, ledger.promoted!.version);
      this.log(`escalation: ${n} consecutive failed versions`);
      const manifest = await manifestAt(this.h, promoted.commit);
      const evalRows = (await this.o.store.one<{ n: number }>(`select count(*)::int as n from rollouts where version = ? and split = 'val'`, [promoted.id]))?.n ?? 0;
      this.log(`  1. re-checking the evaluation pipeline: eval set ${manifest.eval_set?.path ?? '(none)'} pinned ${manifest.eval_set?.hash?.slice(0, 19) ?? 'nowhere'}; ${evalRows} eval rollouts of ${promoted.id} in the store`);
      if (!this.avoidLayers.includes(e.layer)) this.avoidLayers.push(e.layer);
      this.log(`  2. switching layer: setting aside ${this.avoidLayers.join(', ')}`);
      this.log(`  3. consulting the skill library: ${this.skills().length} skill(s) (${this.skills().map((s) => s.record.id).join(', ')})`);
      this.preferSubtraction = true;
      this.log('  4. preferring interventions that remove or disable a component');
      this.log(`  5. rolling back to the last good version: the next version branches from ${promoted.id} (promoted), not from ${failed}`);
    }
  }
}

export async function evolve(h: Harness, o: EvolveOptions): Promise<EvolveResult> {
  return new Evolution(h, o).run();
}
