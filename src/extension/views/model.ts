// The state models behind the Versions, Findings and Skills views. Pure data in, pure data
// out (no editor, no engine at runtime), so they are unit-tested without VS Code and the
// tree providers only map them onto TreeItems.
import type { Lineage, LineageNode, MetricCell } from '../../core/harness/lineage';
import type { Finding, Severity, VersionStatus } from '../../core/model';

/**
 * What a version node offers, derived from its state. Menus in package.json key on these
 * tokens inside the node's `contextValue` (`viewItem =~ /\+promote\b/`), so a feature that
 * lands later adds its token here and its menu entry there. The context menu's groups:
 * 1_review (diff, evidence, compare), 2_evaluate (backtest: `+backtest` on a proposed version
 * with its commit; gate: `+gate` on an evaluated one), 3_decide, 4_evolve, 5_skill.
 */
export type VersionAction = 'diff' | 'evidence' | 'promote' | 'reject' | 'recordSkill' | 'newVersion' | 'applySkill' | 'backtest' | 'gate';

/** Backtest outcome shown on the node once the backtest feature records one (extension point). */
export interface BacktestInfo {
  verdict: 'pass' | 'fail' | 'inconclusive';
  summary: string;
}

/** Gate decision shown on the node once the gate feature records one (extension point). */
export interface GateInfo {
  decision: string;
  by: string;
  reasons: string;
}

export interface VersionNode {
  id: string;
  parent: string | null;
  children: string[];
  branch: string;
  status: VersionStatus;
  branchState: LineageNode['branchState'];
  commit: string;
  hypothesis: string | null;
  successCriterion: string | null;
  layer: string;
  /** Primary metric, from the ledger or (when the ledger has none) from the store's rollouts of the version. */
  primary: (MetricCell & { source: 'ledger' | 'store' }) | null;
  /** The current tip of evo/promoted. */
  isPromotedTip: boolean;
  /** On the path from the root to the promoted tip. */
  onPromotedLine: boolean;
  /** Why it was rejected (negative evidence), when it was. */
  rejectReason: string | null;
  /** The version has a commit of its own on top of its parent (something to diff). */
  hasIntervention: boolean;
  skill: string | null;
  backtest: BacktestInfo | null;
  gate: GateInfo | null;
  actions: VersionAction[];
  contextValue: string;
}

export interface VersionsModel {
  roots: string[];
  nodes: Map<string, VersionNode>;
  promoted: string | null;
  /** evo/promoted does not point where the ledger says (an interrupted promotion). */
  promotedMismatch: boolean;
}

/** `evotrainer.version status:evaluated +diff +promote …`: one token per action. */
export function versionContextValue(status: VersionStatus, actions: readonly VersionAction[]): string {
  return ['evotrainer.version', `status:${status}`, ...actions.map((a) => `+${a}`)].join(' ');
}

export function actionsFor(n: Pick<VersionNode, 'status' | 'parent' | 'hasIntervention' | 'skill'>): VersionAction[] {
  const a: VersionAction[] = ['evidence'];
  const decided = n.status === 'promoted' || n.status === 'rejected';
  if (n.parent && n.hasIntervention) a.push('diff');
  if (n.status === 'proposed' && n.hasIntervention) a.push('backtest');
  if (n.status === 'evaluated') a.push('gate', 'promote');
  if (n.parent && !decided) a.push('reject');
  if (n.status === 'promoted' && n.parent && n.hasIntervention) a.push('recordSkill');
  if (n.status !== 'rejected') a.push('newVersion', 'applySkill');
  return a;
}

export interface VersionsInput {
  lineage: Lineage;
  /** Primary-metric values measured in the store, by version id (used where the ledger has none). */
  storeMetrics?: Map<string, number>;
  rejectReasons?: Map<string, string>;
  backtests?: Map<string, BacktestInfo>;
  gates?: Map<string, GateInfo>;
}

export function buildVersionsModel(input: VersionsInput): VersionsModel {
  const { lineage } = input;
  const byId = new Map(lineage.versions.map((v) => [v.id as string, v]));
  const promoted = lineage.promoted?.version ?? null;
  const line = new Set<string>();
  for (let cur = promoted ? byId.get(promoted) : undefined; cur && !line.has(cur.id); cur = cur.parent ? byId.get(cur.parent) : undefined) line.add(cur.id);
  const nodes = new Map<string, VersionNode>();
  const valueOf = (v: LineageNode): number | null => v.primary?.value ?? (input.storeMetrics?.get(v.id) ?? null);
  for (const v of lineage.versions) {
    const parent = v.parent ? byId.get(v.parent) : undefined;
    let primary: VersionNode['primary'] = null;
    if (v.primary && v.primary.value !== null) primary = { ...v.primary, source: 'ledger' };
    else {
      const measured = input.storeMetrics?.get(v.id);
      const name = v.primary?.name ?? parent?.primary?.name ?? null;
      if (measured !== undefined && name) {
        const pv = parent ? valueOf(parent) : null;
        primary = { name, value: measured, delta: pv !== null ? Number((measured - pv).toPrecision(12)) : null, source: 'store' };
      } else if (v.primary) primary = { ...v.primary, source: 'ledger' };
    }
    const rejectReason = v.status === 'rejected' ? (input.rejectReasons?.get(v.id) ?? v.decision?.reasons ?? null) : null;
    const gate = input.gates?.get(v.id) ?? (v.decision && v.parent ? { decision: v.decision.decision, by: v.decision.by, reasons: v.decision.reasons } : null);
    const base = {
      status: v.status,
      parent: v.parent,
      hasIntervention: parent ? v.commit !== parent.commit : false,
      skill: v.skill,
    };
    const actions = actionsFor(base);
    nodes.set(v.id, {
      id: v.id,
      parent: v.parent && byId.has(v.parent) ? v.parent : null,
      children: [...v.children],
      branch: v.branch,
      status: v.status,
      branchState: v.branchState,
      commit: v.commit,
      hypothesis: v.hypothesis,
      successCriterion: v.successCriterion,
      layer: v.layer,
      primary,
      isPromotedTip: v.id === promoted,
      onPromotedLine: line.has(v.id),
      rejectReason,
      hasIntervention: base.hasIntervention,
      skill: v.skill,
      backtest: input.backtests?.get(v.id) ?? null,
      gate,
      actions,
      contextValue: versionContextValue(v.status, actions),
    });
  }
  const roots = [...nodes.values()].filter((n) => !n.parent).map((n) => n.id);
  return { roots, nodes, promoted, promotedMismatch: Boolean(lineage.promoted && !lineage.promoted.tipMatches) };
}

export function formatNumber(n: number | null): string {
  if (n === null) return '—';
  return String(Number(n.toPrecision(4)));
}

export function formatDelta(n: number | null): string {
  if (n === null) return '';
  if (n === 0) return '±0';
  return `${n > 0 ? '+' : '−'}${formatNumber(Math.abs(n))}`;
}

/** The short slug of a version branch: `evo/v3-halve-format` → `halve-format`. */
export function branchSlug(n: Pick<VersionNode, 'id' | 'branch'>): string {
  const m = /^evo\/v\d+-(.*)$/.exec(n.branch);
  return m?.[1] ?? n.branch;
}

/** ThemeIcon id and theme colour per state: the promoted tip a star, the promoted line green, rejected red. */
export function versionIcon(n: Pick<VersionNode, 'status' | 'isPromotedTip' | 'onPromotedLine'>): { id: string; color: string } {
  if (n.isPromotedTip) return { id: 'star-full', color: 'charts.green' };
  switch (n.status) {
    case 'promoted':
      return n.onPromotedLine ? { id: 'pass-filled', color: 'charts.green' } : { id: 'pass', color: 'charts.green' };
    case 'rejected':
      return { id: 'circle-slash', color: 'charts.red' };
    case 'evaluated':
      return { id: 'beaker', color: 'charts.blue' };
    case 'training':
      return { id: 'sync', color: 'charts.purple' };
    case 'backtested':
      return { id: 'history', color: 'charts.yellow' };
    default:
      return { id: 'circle-large-outline', color: 'descriptionForeground' };
  }
}

export interface VersionPresentation {
  label: string;
  description: string;
  tooltip: string;
  icon: { id: string; color: string };
}

/** Label, description (metric, delta, state) and a markdown tooltip; every piece of user text is escaped by the caller. */
export function presentVersion(n: VersionNode): VersionPresentation {
  const parts: string[] = [];
  if (n.primary && n.primary.value !== null) parts.push(`${n.primary.name} ${formatNumber(n.primary.value)}${n.primary.delta !== null ? ` (${formatDelta(n.primary.delta)})` : ''}`);
  parts.push(n.isPromotedTip ? 'promoted ★' : n.status);
  if (n.status === 'rejected' && n.rejectReason) parts.push(n.rejectReason);
  if (n.branchState !== 'ok') parts.push(`branch ${n.branchState}`);
  const tip: string[] = [`${n.id} · ${n.status}${n.isPromotedTip ? ' (promoted tip)' : n.onPromotedLine ? ' (on the promoted line)' : ''}`, `branch ${n.branch} @ ${n.commit.slice(0, 12)}`];
  if (n.hypothesis) tip.push(`hypothesis: ${n.hypothesis}`);
  if (n.successCriterion) tip.push(`success: ${n.successCriterion}`);
  if (n.primary) tip.push(`${n.primary.name}: ${formatNumber(n.primary.value)}${n.primary.delta !== null ? ` (${formatDelta(n.primary.delta)} vs parent)` : ''}${n.primary.source === 'store' ? ' — measured on the store\'s rollouts' : ''}`);
  if (n.status === 'rejected') tip.push(`rejected: ${n.rejectReason ?? 'no reason recorded'} (kept as negative evidence)`);
  if (n.backtest) tip.push(`backtest: ${n.backtest.verdict} — ${n.backtest.summary}`);
  if (n.gate && n.status !== 'rejected') tip.push(`gate: ${n.gate.decision} by ${n.gate.by}`);
  if (n.skill) tip.push(`from skill ${n.skill}`);
  return { label: `${n.id} ${branchSlug(n)}`, description: parts.join(' · '), tooltip: tip.join('\n'), icon: versionIcon(n) };
}

// ---------------------------------------------------------------- findings

/** The failure mode a rule's finding points at in the failure explorer (null: unfiltered). */
export const RULE_FAILURE_MODE: Record<string, string | null> = {
  LEAK: 'leak',
  R1: 'wrong_answer',
  R2: 'echo_trap',
  R3: null,
  R4: null,
  R5: 'test_never_run',
  R6: 'test_never_run',
};

export interface FailureModeCount {
  mode: string;
  count: number;
}

export type FindingsNode =
  | { kind: 'scope'; label: string; description: string }
  | { kind: 'severity'; severity: Severity; count: number }
  | { kind: 'finding'; finding: Finding; failureMode: string | null }
  | { kind: 'modes'; count: number }
  | { kind: 'mode'; mode: string; count: number };

const SEVERITY_ORDER: Severity[] = ['critical', 'warning', 'info'];

export interface FindingsModel {
  scope: { version: string | null; run: string | null; rollouts: number };
  top: FindingsNode[];
  children: Map<FindingsNode, FindingsNode[]>;
}

export function buildFindingsModel(input: { scope: FindingsModel['scope']; findings: Finding[]; failureModes: FailureModeCount[] }): FindingsModel {
  const top: FindingsNode[] = [];
  const children = new Map<FindingsNode, FindingsNode[]>();
  const what = input.scope.version ? `version ${input.scope.version}` : input.scope.run ? `run ${input.scope.run}` : 'all rollouts';
  top.push({ kind: 'scope', label: what, description: `${input.scope.rollouts} rollouts` });
  for (const severity of SEVERITY_ORDER) {
    const fs = input.findings.filter((f) => f.severity === severity);
    if (!fs.length) continue;
    const group: FindingsNode = { kind: 'severity', severity, count: fs.length };
    top.push(group);
    children.set(group, fs.map((finding) => ({ kind: 'finding', finding, failureMode: RULE_FAILURE_MODE[finding.rule] ?? null })));
  }
  const modes = input.failureModes.filter((m) => m.mode !== 'success' && m.count > 0).sort((a, b) => b.count - a.count);
  if (modes.length) {
    const group: FindingsNode = { kind: 'modes', count: modes.reduce((s, m) => s + m.count, 0) };
    top.push(group);
    children.set(group, modes.map((m) => ({ kind: 'mode', mode: m.mode, count: m.count })));
  }
  return { scope: input.scope, top, children };
}

/** Arguments of `evotrainer.openFailureExplorer` for a finding or failure-mode node. */
export function explorerArgs(node: FindingsNode, scope: FindingsModel['scope']): { failureMode?: string; version?: string; run?: string } | null {
  const where = { ...(scope.version ? { version: scope.version } : {}), ...(scope.run && !scope.version ? { run: scope.run } : {}) };
  if (node.kind === 'finding') return node.failureMode ? { failureMode: node.failureMode, ...where } : where;
  if (node.kind === 'mode') return { failureMode: node.mode, ...where };
  return null;
}

// ---------------------------------------------------------------- skills

export interface SkillItem {
  id: string;
  title: string;
  category: string;
  domains: string[];
  trigger: string;
  file: string;
  origin: 'harness' | 'library';
  shared: boolean;
  evidence: number;
}

export type SkillsNode =
  | { kind: 'domain'; domain: string; count: number }
  | { kind: 'category'; domain: string; category: string; count: number }
  | { kind: 'skill'; domain: string; skill: SkillItem }
  | { kind: 'problem'; message: string };

export interface SkillsModel {
  top: SkillsNode[];
  children: Map<SkillsNode, SkillsNode[]>;
}

/** Skills by domain, then category; a skill that worked in two domains appears under both. */
export function buildSkillsModel(skills: SkillItem[], problems: string[] = []): SkillsModel {
  const top: SkillsNode[] = [];
  const children = new Map<SkillsNode, SkillsNode[]>();
  const domains = [...new Set(skills.flatMap((s) => (s.domains.length ? s.domains : ['(no domain)'])))].sort();
  for (const domain of domains) {
    const inDomain = skills.filter((s) => (s.domains.length ? s.domains.includes(domain) : domain === '(no domain)'));
    const d: SkillsNode = { kind: 'domain', domain, count: inDomain.length };
    top.push(d);
    const cats = [...new Set(inDomain.map((s) => s.category))].sort();
    children.set(
      d,
      cats.map((category) => {
        const c: SkillsNode = { kind: 'category', domain, category, count: inDomain.filter((s) => s.category === category).length };
        children.set(c, inDomain.filter((s) => s.category === category).sort((a, b) => a.id.localeCompare(b.id)).map((skill) => ({ kind: 'skill', domain, skill })));
        return c;
      }),
    );
  }
  for (const message of problems) top.push({ kind: 'problem', message });
  return { top, children };
}

export const categoryLabel = (c: string): string => c.replace(/_/g, ' ').replace(/^./, (x) => x.toUpperCase());
