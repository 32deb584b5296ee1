import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { HealthReport } from '../diagnose/health';
import { checkBoundary, checkSingleFactor } from '../harness/boundary';
import { analyzeChanges } from '../harness/changes';
import type { LedgerEntry } from '../harness/ledger';
import { git, gitOut } from '../harness/git';
import { manifestAt, type Harness } from '../harness/repo';
import type { LoadedSkill } from '../harness/skills';
import { LAYERS } from '../harness/versions';
import type { ChatModel } from '../llm/chat';
import type { Finding, Layer } from '../model';

/**
 * Proposers turn the evidence of a round into exactly one single-factor intervention
 * (METHOD.md steps 5–6): a skill whose trigger matches (default, no LLM), an LLM given
 * the evidence (its patch validated before anything is committed), or a person who
 * commits on the version branch.
 */

/** A JSON/YAML config key an intervention sets: `{file: "filters/config.json", key: "drop_zero_variance_groups", value: true}`. */
export interface KeySet {
  file: string;
  key: string;
  value: unknown;
}

export interface Proposal {
  hypothesis: string;
  targetMetric: string;
  success: string;
  layer: Layer;
  because: string;
  /** How to make the change: config keys to set, a unified diff, or a skill's own patch. */
  change: { kind: 'keys'; set: KeySet[] } | { kind: 'patch'; diff: string } | { kind: 'skill-patch' };
  skill?: LoadedSkill;
  /** The trigger that matched, for skills. */
  trigger?: string;
  explanation: string;
}

export interface ProposalContext {
  harness: Harness;
  promoted: LedgerEntry;
  /** Health of the promoted version, and of each version rejected since (what the gate saw there). */
  health: HealthReport;
  rejectedHealth: { entry: LedgerEntry; health: HealthReport }[];
  findings: Finding[];
  entries: LedgerEntry[];
  skills: LoadedSkill[];
  /** Layers to avoid (escalation: switch layer after repeated failures). */
  avoidLayers: Layer[];
  /** Prefer interventions that remove or disable a component (escalation). */
  preferSubtraction: boolean;
  /** A person's REVISE feedback on the last proposal. */
  feedback?: string;
}

export interface Proposer {
  readonly name: string;
  propose(ctx: ProposalContext): Promise<Proposal | null>;
}

// ---------------------------------------------------------------- triggers

export interface TriggerCheck {
  holds: boolean;
  /** The clauses and the values they were judged on. */
  detail: string;
  /** The evidence it held on (the promoted version, or a rejected one). */
  on: string | null;
}

const CLAUSE = /^\s*([A-Za-z_][\w.]*)\s*(<=|>=|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/;

/** `metric op number [and metric op number …]`, judged on one health report. */
export function evaluateTrigger(trigger: string, health: HealthReport): { holds: boolean | null; detail: string } {
  const clauses = trigger.split(/\s+and\s+/i);
  const parts: string[] = [];
  let holds = true;
  for (const c of clauses) {
    const m = CLAUSE.exec(c);
    if (!m) return { holds: null, detail: `"${c.trim()}" is not METRIC OP NUMBER` };
    const [, metric, op, num] = m as unknown as [string, string, string, string];
    const v = health.metrics.find((x) => x.name === metric)?.value ?? null;
    if (v === null) return { holds: false, detail: `${metric} has no value` };
    const n = Number(num);
    const ok = op === '<' ? v < n : op === '<=' ? v <= n : op === '>' ? v > n : op === '>=' ? v >= n : op === '==' ? v === n : v !== n;
    parts.push(`${metric} = ${v.toFixed(3)} ${ok ? '' : 'not '}${op} ${num}`);
    holds &&= ok;
  }
  return { holds, detail: parts.join(' and ') };
}

export function checkTrigger(trigger: string, ctx: Pick<ProposalContext, 'health' | 'rejectedHealth' | 'promoted'>): TriggerCheck {
  const own = evaluateTrigger(trigger, ctx.health);
  if (own.holds) return { holds: true, detail: `${own.detail} on ${ctx.promoted.id} (promoted)`, on: ctx.promoted.id };
  for (const r of ctx.rejectedHealth) {
    const t = evaluateTrigger(trigger, r.health);
    if (t.holds) return { holds: true, detail: `${t.detail} on ${r.entry.id} (rejected: ${r.entry.rejectReason?.slice(0, 120) ?? 'by the gate'})`, on: r.entry.id };
  }
  return { holds: false, detail: own.detail, on: null };
}

// ---------------------------------------------------------------- skill proposer

const REMOVES = (s: LoadedSkill) => {
  const set = (s.record.intervention.parameters.set as KeySet[] | undefined) ?? [];
  return set.some((k) => k.value === false || k.value === 0 || k.value === null) || /^-[^-]/m.test(s.record.patch) && !/^\+[^+]/m.test(s.record.patch);
};

/** Skills tried before on this line and rejected: negative evidence, not tried again. */
function triedAndRejected(ctx: ProposalContext, skill: LoadedSkill): LedgerEntry | undefined {
  return ctx.entries.find((e) => e.skill?.id === skill.record.id && e.status === 'rejected');
}

function alreadyIn(ctx: ProposalContext, skill: LoadedSkill): LedgerEntry | undefined {
  return ctx.entries.find((e) => e.skill?.id === skill.record.id && (e.status === 'promoted' || !['rejected'].includes(e.status)));
}

export class SkillProposer implements Proposer {
  readonly name = 'skill';

  async propose(ctx: ProposalContext): Promise<Proposal | null> {
    const considered: string[] = [];
    const matching: { skill: LoadedSkill; check: TriggerCheck }[] = [];
    for (const s of ctx.skills) {
      const r = s.record;
      const rejected = triedAndRejected(ctx, s);
      if (rejected) {
        considered.push(`${r.id}: already tried in ${rejected.id} and rejected (${rejected.rejectReason?.slice(0, 80) ?? 'negative evidence'})`);
        continue;
      }
      if (s.origin === 'library' && !r.validation.some((v) => v.status === 'promoted')) {
        considered.push(`${r.id}: from another harness or library with no promoted evidence yet (only validated skills travel)`);
        continue;
      }
      const done = alreadyIn(ctx, s);
      if (done) {
        considered.push(`${r.id}: already applied in ${done.id} (${done.status})`);
        continue;
      }
      if (ctx.avoidLayers.includes(r.intervention.layer as Layer)) {
        considered.push(`${r.id}: layer ${r.intervention.layer} set aside after repeated failures there`);
        continue;
      }
      const check = checkTrigger(r.trigger, ctx);
      considered.push(`${r.id}: trigger "${r.trigger}" ${check.holds ? 'holds' : 'does not hold'} (${check.detail})`);
      if (check.holds) matching.push({ skill: s, check });
    }
    if (!matching.length) return null;
    // Evidence from a rejected version (what the gate caught) first, then subtraction when asked, then file order.
    matching.sort((a, b) => Number(b.check.on !== ctx.promoted.id) - Number(a.check.on !== ctx.promoted.id) || (ctx.preferSubtraction ? Number(REMOVES(b.skill)) - Number(REMOVES(a.skill)) : 0));
    const { skill, check } = matching[0]!;
    const r = skill.record;
    const set = (r.intervention.parameters.set as KeySet[] | undefined) ?? null;
    const validated = r.validation.filter((v) => v.status === 'promoted');
    return {
      hypothesis: r.intervention.hypothesis,
      targetMetric: r.intervention.target_metric,
      success: r.intervention.success,
      layer: r.intervention.layer as Layer,
      because: `skill ${r.id}: ${r.expected_outcome}`,
      change: set && set.length ? { kind: 'keys', set } : { kind: 'skill-patch' },
      skill,
      trigger: r.trigger,
      explanation: [
        `chose skill ${r.id} ("${r.title}", ${r.category}) because its trigger holds: ${check.detail}`,
        validated.length ? `validated before in ${validated.map((v) => `${v.harness} ${v.version} (${v.domain})`).join(', ')}` : `no validation evidence yet (${r.intervention.source.harness})`,
        set ? `parameters: ${set.map((k) => `${k.file}:${k.key} = ${JSON.stringify(k.value)}`).join(', ')}` : 'applies its recorded patch',
        `candidates considered: ${considered.join('; ')}`,
      ].join('\n'),
    };
  }
}

// ---------------------------------------------------------------- LLM proposer

export interface PatchCheck {
  ok: boolean;
  reason: string;
}

/** Would this diff apply on `commit`, inside the action boundary, as one factor? Nothing is changed. */
export async function validatePatch(h: Harness, commit: string, diff: string, factor: string | null): Promise<PatchCheck> {
  if (!/^(diff --git |--- )/m.test(diff)) return { ok: false, reason: 'the patch is not a unified diff (it needs "--- a/FILE" / "+++ b/FILE" headers and @@ hunks)' };
  const dir = mkdtempSync(path.join(tmpdir(), 'evotrainer-patch-'));
  const patch = path.join(dir, 'change.patch');
  writeFileSync(patch, diff.endsWith('\n') ? diff : diff + '\n');
  const env = { GIT_INDEX_FILE: path.join(dir, 'index') };
  try {
    await git(h.root, ['read-tree', commit], { env });
    const applied = await git(h.root, ['apply', '--cached', '--recount', patch], { env, allowFail: true });
    if (applied.code !== 0) return { ok: false, reason: `the patch does not apply on ${commit.slice(0, 12)}: ${applied.stderr.trim().split('\n').slice(0, 3).join(' / ')}` };
    const tree = await gitOut(h.root, ['write-tree'], { env });
    const manifest = await manifestAt(h, commit);
    const changes = await analyzeChanges(h, commit, tree, manifest.eval_set?.path ?? null);
    if (!changes.files.length) return { ok: false, reason: 'the patch changes nothing' };
    const violations = checkBoundary(manifest, changes);
    if (violations.length) return { ok: false, reason: `outside the action boundary: ${violations.map((v) => `${v.path} [${v.rule}]`).join('; ')}` };
    const f = checkSingleFactor(changes, factor);
    if (!f.ok) return { ok: false, reason: `more than one factor: changed ${f.units.join(', ')}${f.outside.length ? `; outside the declared factor: ${f.outside.join(', ')}` : ''}` };
    return { ok: true, reason: `applies cleanly; one factor (${f.units.join(', ')})` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface LlmAnswer {
  hypothesis?: string;
  target_metric?: string;
  success?: string;
  layer?: string;
  because?: string;
  factor?: string;
  patch?: string;
}

export class LlmProposer implements Proposer {
  readonly name = 'llm';
  /** Every refusal, with its reason, for the loop's log. */
  readonly refusals: string[] = [];

  constructor(
    private readonly model: ChatModel,
    private readonly opts: { signal?: AbortSignal } = {},
  ) {}

  private prompt(ctx: ProposalContext, files: Record<string, string>): string {
    const alerts = ctx.health.alerts.map((m) => `${m.name}=${m.value?.toFixed(3)} (${m.status})`).join(', ') || 'none';
    const findings = ctx.findings.map((f) => `${f.rule} ${f.title}: ${f.evidence.map((e) => `${e.metric}=${e.value}`).join(', ')}`).join('\n') || 'none';
    const negative = ctx.entries.filter((e) => e.status === 'rejected').map((e) => `${e.id} (${e.layer}): ${e.hypothesis?.change ?? ''} — rejected: ${e.rejectReason ?? ''}`).join('\n') || 'none';
    const lineage = ctx.entries.map((e) => `${e.id} parent=${e.parent ?? '-'} ${e.status} ${e.layer}`).join('\n');
    const skills = ctx.skills.map((s) => `${s.record.id}: when ${s.record.trigger} → ${s.record.intervention.hypothesis}`).join('\n') || 'none';
    return [
      `Promoted version: ${ctx.promoted.id}. Health alerts: ${alerts}.`,
      `Findings:\n${findings}`,
      `Lineage:\n${lineage}`,
      `Negative evidence (rejected versions — do not repeat them):\n${negative}`,
      `Skills whose triggers may apply:\n${skills}`,
      ctx.avoidLayers.length ? `Avoid these layers (they failed repeatedly): ${ctx.avoidLayers.join(', ')}` : '',
      ctx.feedback ? `A reviewer asked for a revision: ${ctx.feedback}` : '',
      `Editable files of the harness at ${ctx.promoted.id}:\n${Object.entries(files).map(([p, t]) => `--- ${p}\n${t}`).join('\n')}`,
      'Answer with ONE JSON object: {"hypothesis": "If we change X, METRIC improves because Z", "target_metric": "...", "success": "METRIC OP NUMBER", "layer": one of ' +
        LAYERS.join('|') +
        ', "because": "...", "factor": "path[:key]", "patch": "a unified diff (--- a/FILE, +++ b/FILE, @@ hunks) changing ONE factor inside the editable paths"}',
    ]
      .filter(Boolean)
      .join('\n\n');
  }

  async propose(ctx: ProposalContext): Promise<Proposal | null> {
    const m = await manifestAt(ctx.harness, ctx.promoted.commit);
    const editable = m.action_boundary?.editable ?? [];
    const listed = (await gitOut(ctx.harness.root, ['ls-tree', '-r', '--name-only', ctx.promoted.commit])).split('\n').filter(Boolean);
    const files: Record<string, string> = {};
    for (const p of listed.filter((p) => editable.some((e) => (e.endsWith('/') ? p.startsWith(e) : p === e)) && !/\.md$/.test(p)).slice(0, 20)) {
      files[p] = (await gitOut(ctx.harness.root, ['show', `${ctx.promoted.commit}:${p}`])).slice(0, 4000);
    }
    const messages: { role: 'system' | 'user' | 'assistant'; content: string }[] = [
      { role: 'system', content: 'You evolve an RL training harness one single-factor, falsifiable intervention at a time. Reply with JSON only.' },
      { role: 'user', content: this.prompt(ctx, files) },
    ];
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await this.model.complete({ messages, json: true, temperature: 0.2, maxTokens: 2000, signal: this.opts.signal });
      let a: LlmAnswer;
      let reason: string | null = null;
      try {
        a = JSON.parse(res.content.replace(/^```(?:json)?\s*|\s*```\s*$/g, '')) as LlmAnswer;
      } catch {
        a = {};
        reason = 'the answer is not a JSON object';
      }
      if (!reason) {
        const missing = (['hypothesis', 'target_metric', 'success', 'layer', 'patch'] as const).filter((k) => typeof a[k] !== 'string' || !a[k]!.trim());
        if (missing.length) reason = `missing fields: ${missing.join(', ')}`;
        else if (!(LAYERS as readonly string[]).includes(a.layer!)) reason = `layer must be one of ${LAYERS.join(', ')}`;
        else if (!CLAUSE.test(a.success!)) reason = `success must be machine-checkable: METRIC OP NUMBER, got "${a.success}"`;
        else {
          const check = await validatePatch(ctx.harness, ctx.promoted.commit, a.patch!, a.factor ?? null);
          if (!check.ok) reason = check.reason;
        }
      }
      if (!reason) {
        return {
          hypothesis: a.hypothesis!,
          targetMetric: a.target_metric!,
          success: a.success!,
          layer: a.layer as Layer,
          because: a.because ?? 'proposed by the model',
          change: { kind: 'patch', diff: a.patch! },
          explanation: `proposed by ${this.model.model} at ${this.model.endpoint}${attempt ? ' after one refusal' : ''}`,
        };
      }
      this.refusals.push(reason);
      messages.push({ role: 'assistant', content: res.content }, { role: 'user', content: `Refused: ${reason}. Fix it and answer again with the same JSON shape.` });
    }
    return null;
  }
}

