import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { z } from 'zod';
import type { Skill, SkillCategory, VersionId } from '../model';
import { checkBoundary, checkSingleFactor, type BoundaryViolation, type FactorCheck } from './boundary';
import { shJoin, shQuote } from '../jobs/quote';
import { analyzeChanges } from './changes';
import { readLedger, requireEntry, updateLedger, versionNumber, type LedgerEntry } from './ledger';
import { casRef, git, gitOut, oneLine, ZERO_OID } from './git';
import { dirtyPaths, HarnessError, KEEP_PREFIX, manifestAt, nowIso, operationInProgress, OPERATION_NEXT_STEP, type Harness, type Operation } from './repo';
import { testPause } from './testHooks';
import { addWorktree, LAYERS, reconcile, slugify, validBranchName } from './versions';

/**
 * Skills (METHOD.md, "Skills"): a success distilled into trigger, intervention (commit
 * ref + patch + parameters), expected outcome and validation evidence, stored as one
 * human-readable markdown file with YAML front matter under `skills/`. A skill library
 * is just a folder (or a git checkout) of such files shared across harnesses; a skill
 * enters it only with evidence from at least two domains.
 */

export const SKILL_CATEGORIES: readonly SkillCategory[] = ['reward_design', 'filter_mechanism', 'training_stability', 'evaluation_protocol', 'cross_domain_transfer'];

const evidenceSchema = z.object({
  harness: z.string(),
  domain: z.string(),
  version: z.string(),
  commit: z.string(),
  status: z.string(),
  primary_metric: z.object({ name: z.string(), value: z.number().nullable(), delta: z.number().nullable() }).nullable().optional(),
  backtest: z.string().optional(),
  summary: z.string(),
  recorded_at: z.string(),
});

export const skillSchema = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, 'lowercase letters, digits, ".", "_" or "-"'),
  title: z.string().min(1),
  category: z.enum(SKILL_CATEGORIES as [SkillCategory, ...SkillCategory[]]),
  trigger: z.string().min(1).describe('Rule over metrics/findings, e.g. "dead_group_ratio > 0.5 and the reward is discrete".'),
  expected_outcome: z.string().min(1),
  domains: z.array(z.string()),
  shared: z.boolean().default(false),
  intervention: z.object({
    layer: z.enum(LAYERS as [string, ...string[]]),
    factor: z.string(),
    hypothesis: z.string(),
    target_metric: z.string(),
    success: z.string(),
    parameters: z.record(z.string(), z.unknown()).default({}),
    source: z.object({ harness: z.string(), domain: z.string(), version: z.string(), branch: z.string(), commit: z.string() }),
  }),
  validation: z.array(evidenceSchema),
});

export type SkillRecord = z.infer<typeof skillSchema> & { patch: string; body: string };

export interface LoadedSkill {
  record: SkillRecord;
  file: string;
  origin: 'harness' | 'library';
}

/** The editor's view model (src/core/model `Skill`). */
export function toSkill(r: SkillRecord): Skill {
  return {
    id: r.id,
    title: r.title,
    category: r.category,
    trigger: r.trigger,
    intervention: `${r.intervention.layer}: ${r.intervention.hypothesis} (factor ${r.intervention.factor}; from ${r.intervention.source.harness} ${r.intervention.source.version})`,
    expectedOutcome: r.expected_outcome,
    validationEvidence: r.validation.map((v) => ({ version: v.version as VersionId, domain: v.domain, summary: v.summary })),
    domains: r.domains,
  };
}

// ---------------------------------------------------------------- file format

export function renderSkill(r: SkillRecord): string {
  const { patch, body, ...front } = r;
  const longest = Math.max(2, ...(patch.match(/`+/g) ?? []).map((s) => s.length));
  const fence = '`'.repeat(longest + 1);
  const prose =
    body.trim() ||
    [
      `# ${r.title}`,
      '',
      `**Trigger.** ${r.trigger}`,
      '',
      `**Intervention.** ${r.intervention.hypothesis} (layer ${r.intervention.layer}, factor \`${r.intervention.factor}\`).`,
      '',
      `**Expected outcome.** ${r.expected_outcome}`,
    ].join('\n');
  const evidence = r.validation.map((v) => `- ${v.harness} (${v.domain}) ${v.version}: ${v.summary}`).join('\n');
  return `---\n${stringifyYaml(front, { lineWidth: 0 })}---\n\n${prose.trim()}\n\n## Evidence\n\n${evidence}\n\n## Patch\n\n${fence}diff\n${patch}${patch.endsWith('\n') ? '' : '\n'}${fence}\n`;
}

export function parseSkill(text: string, file: string): SkillRecord {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n([\s\S]*)$/.exec(text);
  if (!m) throw new HarnessError(`${file}: a skill starts with YAML front matter between "---" lines`);
  const parsed = skillSchema.safeParse(parseYaml(m[1]!));
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new HarnessError(`${file}: front matter ${i.path.join('.') || '(root)'}: ${i.message}`);
  }
  const rest = m[2]!;
  const patchAt = rest.search(/^## Patch\s*$/m);
  let patch = '';
  let body = patchAt === -1 ? rest : rest.slice(0, patchAt);
  if (patchAt !== -1) {
    const after = rest.slice(patchAt);
    const open = /^(`{3,})diff\s*$/m.exec(after);
    if (open) {
      const start = open.index + open[0].length + 1;
      const close = after.indexOf(`\n${open[1]}\n`, start - 1);
      patch = after.slice(start, close === -1 ? undefined : close + 1);
    }
  }
  body = body.replace(/\n## Evidence\n[\s\S]*$/, '').trim();
  return { ...parsed.data, patch, body };
}

export function loadSkillFile(file: string, origin: LoadedSkill['origin']): LoadedSkill {
  return { record: parseSkill(readFileSync(file, 'utf8'), file), file, origin };
}

export function skillsDir(h: Harness): string {
  return path.join(h.root, 'skills');
}

/** Every skill of the harness (`skills/`) and of the library, harness copies first. */
export function listSkills(dirs: { harness?: string; library?: string }): { skills: LoadedSkill[]; problems: string[] } {
  const skills: LoadedSkill[] = [];
  const problems: string[] = [];
  for (const [dir, origin] of [
    [dirs.harness, 'harness'],
    [dirs.library, 'library'],
  ] as const) {
    if (!dir || !existsSync(dir)) continue;
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.md') && n.toLowerCase() !== 'readme.md').sort()) {
      try {
        skills.push(loadSkillFile(path.join(dir, f), origin));
      } catch (e) {
        problems.push((e as Error).message);
      }
    }
  }
  return { skills, problems };
}

export function findSkill(ref: string, dirs: { harness?: string; library?: string }): LoadedSkill {
  if (existsSync(ref) && ref.endsWith('.md')) return loadSkillFile(path.resolve(ref), 'harness');
  for (const [dir, origin] of [
    [dirs.harness, 'harness'],
    [dirs.library, 'library'],
  ] as const) {
    if (dir && existsSync(path.join(dir, `${ref}.md`))) return loadSkillFile(path.join(dir, `${ref}.md`), origin);
  }
  throw new HarnessError(`no skill "${ref}" in ${[dirs.harness, dirs.library].filter(Boolean).join(' or ')}; see \`evotrainer skill list\``);
}

export function searchSkills(skills: LoadedSkill[], q: { trigger?: string; domain?: string; category?: string }): LoadedSkill[] {
  const words = (q.trigger ?? '').toLowerCase().split(/[^a-z0-9_.]+/).filter(Boolean);
  return skills.filter(({ record: r }) => {
    const text = `${r.trigger} ${r.title}`.toLowerCase();
    if (words.some((w) => !text.includes(w))) return false;
    if (q.domain && !r.domains.includes(q.domain)) return false;
    if (q.category && r.category !== q.category) return false;
    return true;
  });
}

// ---------------------------------------------------------------- record

export interface RecordOptions {
  from: string;
  id?: string;
  title?: string;
  category?: string;
  trigger?: string;
  expected?: string;
  /** Folder to write to (default: the harness's `skills/`). */
  dir?: string;
  library?: string;
}

function evidenceFor(entry: LedgerEntry, manifest: { name: string; domain: string }, parent: LedgerEntry | undefined): z.infer<typeof evidenceSchema> {
  const pm = entry.primaryMetric;
  const value = pm ? (entry.metrics[pm] ?? null) : null;
  const pv = pm && parent ? parent.metrics[pm] : undefined;
  const delta = value !== null && pv !== undefined ? Number((value - pv).toPrecision(12)) : null;
  const backtest = entry.transitions.flatMap((t) => t.evidence).find((e) => e.kind === 'backtest')?.summary;
  const primary = pm ? { name: pm, value, delta } : null;
  return {
    harness: manifest.name,
    domain: manifest.domain,
    version: entry.id,
    commit: entry.commit,
    status: entry.status,
    primary_metric: primary,
    ...(backtest ? { backtest } : {}),
    summary: [primary ? `${pm} ${value ?? '—'}${delta !== null ? ` (${delta >= 0 ? '+' : ''}${delta})` : ''}` : '', entry.decision ? `${entry.decision.decision} by ${entry.decision.decidedBy}` : ''].filter(Boolean).join(', '),
    recorded_at: nowIso(),
  };
}

/**
 * Distils a promoted version into a skill, or adds its evidence to the skill it was
 * applied from (that is how a skill collects its second domain).
 */
export async function recordSkill(h: Harness, o: RecordOptions): Promise<{ skill: LoadedSkill; created: boolean }> {
  const ledger = await readLedger(h);
  const entry = requireEntry(ledger, o.from);
  if (entry.status !== 'promoted') throw new HarnessError(`${o.from} is ${entry.status}; a skill is distilled from a success — promote it first (\`evotrainer promote ${o.from}\`)`);
  if (!entry.parent || entry.commit === entry.base) throw new HarnessError(`${o.from} has no intervention commit to record`);
  const manifest = await manifestAt(h, entry.commit);
  const parent = ledger.entries.get(entry.parent);
  const evidence = evidenceFor(entry, manifest, parent);
  const dir = o.dir ?? skillsDir(h);
  mkdirSync(dir, { recursive: true });

  if (entry.skill) {
    const existing = findSkill(entry.skill.id, { harness: dir, library: o.library });
    const r = existing.record;
    const validation = [...r.validation.filter((v) => !(v.harness === evidence.harness && v.version === evidence.version)), evidence];
    const updated: SkillRecord = { ...r, validation, domains: [...new Set([...r.domains, manifest.domain])].sort() };
    const file = path.join(dir, `${r.id}.md`);
    writeFileSync(file, renderSkill(updated));
    return { skill: { record: updated, file, origin: 'harness' }, created: false };
  }

  const category = o.category;
  if (!category || !(SKILL_CATEGORIES as readonly string[]).includes(category)) throw new HarnessError(`--category is required: one of ${SKILL_CATEGORIES.join(', ')}`);
  if (!o.trigger || !oneLine(o.trigger)) throw new HarnessError('--trigger is required: the condition (a rule over metrics/findings) under which to use it, e.g. "dead_group_ratio > 0.5"');
  const hyp = entry.hypothesis!;
  const id = o.id ?? slugify(hyp.change);
  const file = path.join(dir, `${id}.md`);
  if (existsSync(file)) throw new HarnessError(`${file} exists; pick another --id (or apply that skill instead)`);
  const patch = await gitOut(h.root, ['diff', '--binary', '--full-index', entry.base, entry.commit]);
  const record: SkillRecord = {
    id,
    title: oneLine(o.title ?? hyp.change),
    category: category as SkillCategory,
    trigger: oneLine(o.trigger),
    expected_outcome: oneLine(o.expected ?? `${hyp.targetMetric}: ${hyp.successCriterion}`),
    domains: [manifest.domain],
    shared: false,
    intervention: {
      layer: entry.layer,
      factor: entry.intervention?.factor ?? '',
      hypothesis: hyp.change,
      target_metric: hyp.targetMetric,
      success: hyp.successCriterion,
      parameters: {},
      source: { harness: manifest.name, domain: manifest.domain, version: entry.id, branch: entry.branch, commit: entry.commit },
    },
    validation: [evidence],
    patch: patch + '\n',
    body: '',
  };
  const id2 = skillSchema.safeParse(record);
  if (!id2.success) throw new HarnessError(`skill ${id}: ${id2.error.issues[0]!.path.join('.')}: ${id2.error.issues[0]!.message} (pass --id)`);
  writeFileSync(file, renderSkill(record));
  return { skill: { record, file, origin: 'harness' }, created: true };
}

/** Copies a skill into the shared library — only with evidence from two or more domains. */
export function shareSkill(skill: LoadedSkill, library: string): string {
  const domains = [...new Set(skill.record.validation.filter((v) => v.status === 'promoted').map((v) => v.domain))];
  if (domains.length < 2) {
    throw new HarnessError(`skill ${skill.record.id} has promoted evidence from ${domains.length ? domains.join(', ') : 'no domain'} only; the library takes a skill that worked in at least 2 domains — apply it in another domain's harness, promote that version, and \`evotrainer skill record --from vN\` there`);
  }
  mkdirSync(library, { recursive: true });
  const file = path.join(library, `${skill.record.id}.md`);
  writeFileSync(file, renderSkill({ ...skill.record, domains: domains.sort(), shared: true }));
  return file;
}

// ---------------------------------------------------------------- apply

export type ApplyOutcome =
  | { outcome: 'clean'; version: VersionId; branch: string; commit: string; worktree: string | null; factor: FactorCheck; next: string }
  | { outcome: 'conflict'; files: string[]; patchFile: string; next: string }
  | { outcome: 'already-applied'; next: string }
  | { outcome: 'empty'; next: string }
  | { outcome: 'dirty-worktree'; files: string[]; next: string }
  | { outcome: 'operation-in-progress'; operation: Operation; next: string }
  | { outcome: 'refused'; violations: BoundaryViolation[]; next: string };

export interface ApplyOptions {
  onto: string;
  worktree?: boolean;
  /** Switch the current checkout to the new version (refused when it has uncommitted changes). */
  checkout?: boolean;
  slug?: string;
}

/** Paths git apply names in its failure messages. */
export function conflictPathsFromApply(stderr: string): string[] {
  const paths = new Set<string>();
  for (const line of stderr.split('\n')) {
    const m =
      /^error: patch failed: (.+):\d+$/.exec(line) ??
      /^error: (.+): (?:patch does not apply|does not exist in index|already exists in index|does not match index)$/.exec(line) ??
      /^U (.+)$/.exec(line) ??
      /^Applied patch to '(.+)' with conflicts\.$/.exec(line);
    if (m) paths.add(m[1]!);
  }
  return [...paths].sort();
}

/**
 * Cherry-picks a skill's intervention onto a NEW version branch from `onto`. Everything
 * is decided in a throwaway index (`git apply --cached --3way` against the onto tree)
 * before any ref moves, so a conflict, an empty or already-applied patch, a boundary
 * refusal, a dirty checkout or an operation in progress leaves the repository exactly
 * as it was; a clean apply writes the ledger first, then the branch.
 */
export async function applySkill(h: Harness, skill: LoadedSkill, o: ApplyOptions): Promise<ApplyOutcome> {
  const r = skill.record;
  const op = operationInProgress(h.gitDir) ?? (h.gitDir !== h.commonDir ? operationInProgress(h.commonDir) : null);
  if (op) return { outcome: 'operation-in-progress', operation: op, next: `a ${op} is in progress in ${h.cwd}; ${OPERATION_NEXT_STEP[op]}, then rerun \`${shJoin(['evotrainer', 'skill', 'apply', r.id, '--onto', o.onto])}\`` };
  if (o.checkout) {
    const dirty = await dirtyPaths(h.cwd);
    if (dirty.length) return { outcome: 'dirty-worktree', files: dirty, next: `${h.cwd} has uncommitted changes (${dirty.slice(0, 5).join(', ')}${dirty.length > 5 ? ', …' : ''}); commit or stash them, or apply without --checkout (or with --worktree)` };
  }
  if (!r.patch.trim()) return { outcome: 'empty', next: `skill ${r.id} carries no patch; apply its intervention by hand in a new version (\`evotrainer version new --parent ${shQuote(o.onto)} … --worktree\`)` };
  await reconcile(h);
  const ledger = await readLedger(h);
  const onto = requireEntry(ledger, o.onto);
  if (onto.status === 'rejected') throw new HarnessError(`${onto.id} was rejected; apply the skill onto a good version (the promoted one is ${ledger.promoted?.version ?? 'unknown'})`);

  const patchDir = path.join(h.root, '.evotrainer', 'patches');
  mkdirSync(patchDir, { recursive: true });
  const patchFile = path.join(patchDir, `${r.id}.patch`);
  writeFileSync(patchFile, r.patch);
  const tmpIndex = path.join(h.commonDir, `evotrainer-apply-${process.pid}`);
  const env = { GIT_INDEX_FILE: tmpIndex };
  let tree: string;
  try {
    await git(h.root, ['read-tree', onto.commit], { env });
    await testPause('skill-apply:in-throwaway-index');
    const reverse = await git(h.root, ['apply', '--cached', '--check', '--reverse', patchFile], { env, allowFail: true });
    if (reverse.code === 0) return { outcome: 'already-applied', next: `${onto.id} already contains the intervention of ${r.id}; nothing to do (its evidence can still be recorded from the version that has it)` };
    const applied = await git(h.root, ['apply', '--cached', '--3way', patchFile], { env, allowFail: true });
    if (applied.code !== 0) {
      const unmerged = (await gitOut(h.root, ['ls-files', '-u', '-z'], { env })).split('\0').filter(Boolean).map((l) => l.slice(l.indexOf('\t') + 1));
      const files = [...new Set([...unmerged, ...conflictPathsFromApply(applied.stderr)])].sort();
      return {
        outcome: 'conflict',
        files: files.length ? files : ['(git apply gave no file; see the patch)'],
        patchFile,
        // The skill's texts come from a skill file (perhaps another team's): every word of a command to paste is quoted.
        next: `nothing was changed. The intervention of ${r.id} conflicts with ${onto.id} in ${files.join(', ')}. To adapt it by hand: \`${shJoin(['evotrainer', 'version', 'new', '--parent', onto.id, '--hypothesis', r.intervention.hypothesis, '--target-metric', r.intervention.target_metric, '--success', r.intervention.success, '--layer', r.intervention.layer, '--worktree'])}\`, then in that worktree \`${shJoin(['git', 'apply', '--3way', patchFile])}\` (or --reject), resolve, and \`evotrainer version commit vN\``,
      };
    }
    tree = await gitOut(h.root, ['write-tree'], { env });
  } finally {
    rmSync(tmpIndex, { force: true });
  }
  if (tree === (await gitOut(h.root, ['rev-parse', `${onto.commit}^{tree}`]))) return { outcome: 'empty', next: `the patch of ${r.id} changes nothing on ${onto.id}` };
  const manifest = await manifestAt(h, onto.commit);
  const changes = await analyzeChanges(h, onto.commit, tree, manifest.eval_set?.path ?? null);
  const violations = checkBoundary(manifest, changes);
  if (violations.length) return { outcome: 'refused', violations, next: `nothing was changed: the intervention touches what ${manifest.name}'s action boundary forbids (${violations.map((v) => `${v.path} [${v.rule}]`).join(', ')})` };
  const factor = checkSingleFactor(changes, r.intervention.factor || null);

  let entry!: LedgerEntry;
  let keep: string | null = null;
  const dropKeep = async () => {
    if (keep) await git(h.root, ['update-ref', '-d', keep], { allowFail: true });
  };
  await updateLedger(h, async (l) => {
    const n = Math.max(-1, ...[...l.entries.keys()].map(versionNumber)) + 1;
    const id = `v${n}` as VersionId;
    const branch = `evo/${id}-${o.slug ?? slugify(`skill ${r.id}`)}`;
    if (!(await validBranchName(h, branch))) throw new HarnessError(`"${branch}" is not a valid branch name; pass another --slug`);
    const trailers: [string, string][] = [
      ['Evo-Version', id],
      ['Evo-Parent', onto.id],
      ['Evo-Hypothesis', r.intervention.hypothesis],
      ['Evo-Target-Metric', r.intervention.target_metric],
      ['Evo-Success', r.intervention.success],
      ['Evo-Layer', r.intervention.layer],
      ['Evo-Factor', r.intervention.factor],
      ['Evo-Skill', r.id],
      ['Evo-Skill-Source', `${r.intervention.source.harness} ${r.intervention.source.version} ${r.intervention.source.commit}`],
    ];
    const message = `${id}: apply skill ${r.id}: ${oneLine(r.title)}`.slice(0, 100) + `\n\nTrigger: ${oneLine(r.trigger)}\nExpected: ${oneLine(r.expected_outcome)}\n\n${trailers.map(([k, v]) => `${k}: ${oneLine(v)}`).join('\n')}\n`;
    const commit = await gitOut(h.root, ['commit-tree', tree, '-p', onto.commit, '-F', '-'], { input: message, env: h.commitEnv });
    // Until its branch exists, only the ledger names this commit, and `git gc` would prune it: a ref keeps it.
    await dropKeep(); // a retry after a concurrent ledger write numbers the version anew
    keep = `${KEEP_PREFIX}${process.pid}-${id}`;
    await git(h.root, ['update-ref', '-m', `evotrainer: keep ${id} until its branch exists`, keep, commit]);
    entry = {
      schema: 1,
      id,
      branch,
      parent: onto.id,
      base: onto.commit,
      commit,
      status: 'proposed',
      layer: r.intervention.layer as LedgerEntry['layer'],
      createdAt: nowIso(),
      hypothesis: { change: r.intervention.hypothesis, targetMetric: r.intervention.target_metric, because: `skill ${r.id}: ${r.expected_outcome}`, successCriterion: r.intervention.success },
      intervention: { layer: r.intervention.layer as LedgerEntry['layer'], factor: r.intervention.factor, description: r.title, changedPaths: changes.files.map((f) => f.path), frozen: manifest.action_boundary?.frozen ?? [], rollbackPlan: `check out the parent ${onto.id} (${onto.branch})` },
      metrics: {},
      primaryMetric: onto.primaryMetric ?? manifest.primary_metric ?? null,
      transitions: [{ from: null, to: 'proposed', at: nowIso(), by: h.actor, evidence: [{ kind: 'skill', summary: `applied skill ${r.id} (from ${r.intervention.source.harness} ${r.intervention.source.version}, domains ${r.domains.join(', ')}); trigger: ${r.trigger}` }] }],
      decision: null,
      skill: { id: r.id, sourceCommit: r.intervention.source.commit },
    };
    return { entries: [entry], message: `${id}: proposed from ${onto.id} by applying skill ${r.id}` };
  }).catch(async (err: unknown) => {
    await dropKeep();
    throw err;
  });
  await testPause('skill-apply:after-ledger');
  if (!(await casRef(h.root, `refs/heads/${entry.branch}`, entry.commit, ZERO_OID, `evotrainer: ${entry.id} skill ${r.id}`))) {
    throw new HarnessError(`could not create ${entry.branch}; the ledger has ${entry.id} — rerun any evotrainer command to restore it`);
  }
  await dropKeep();
  let worktree: string | null = null;
  if (o.worktree) worktree = await addWorktree(h, entry);
  else if (o.checkout) await git(h.cwd, ['switch', '--quiet', entry.branch]);
  return {
    outcome: 'clean',
    version: entry.id,
    branch: entry.branch,
    commit: entry.commit,
    worktree,
    factor,
    next: `\`evotrainer backtest ${entry.id} --trust\` (it records the report and advances ${entry.id} to backtested)`,
  };
}
