import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LedgerEntry, PromotedLine } from './ledger';
import { updateLedger } from './ledger';
import { casRef, git, gitOut, ZERO_OID } from './git';
import { hashContent, MANIFEST_FILE, parseManifest, withEvalHash } from './manifest';
import { HarnessError, nowIso, openHarness, PROMOTED_REF, type Harness } from './repo';
import { testPause } from './testHooks';

/** `harness-templates/` beside the bundle (dist/) or the sources (src/core/harness/). */
export function templatesDir(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'harness-templates');
    if (existsSync(candidate) && statSync(candidate).isDirectory()) return candidate;
    if (path.dirname(dir) === dir) throw new HarnessError(`harness-templates/ not found above ${__dirname}; reinstall evotrainer or pass --template PATH`);
  }
}

export function listTemplates(): string[] {
  return readdirSync(templatesDir(), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
}

export const V0_BRANCH = 'evo/v0-root';

export interface InitResult {
  harness: Harness;
  commit: string;
  entry: LedgerEntry;
  evalPinned: string | null;
  notes: string[];
}

/**
 * Creates a harness repository: copies a template, pins the eval set's hash in the
 * manifest, `git init -b main`, ignores `.evotrainer/`, commits, and records that commit
 * as v0 — the root version, promoted (`evo/v0-root`, `evo/promoted`).
 */
export async function initHarness(dir: string, template = 'starter'): Promise<InitResult> {
  const target = path.resolve(dir);
  // `init .`: the folder the user's shell is in is initialized where it is, never replaced.
  const inPlace = existsSync(target) && realpathSync(target) === realpathSync(process.cwd());
  if (!inPlace && existsSync(target) && (!statSync(target).isDirectory() || readdirSync(target).length)) {
    throw new HarnessError(`${target} exists and is not empty; pick a new folder (init never writes into existing work), or run \`evotrainer init .\` inside it`);
  }
  if (inPlace && existsSync(path.join(target, '.git'))) {
    throw new HarnessError(`${target} is already a git repository; init creates the harness repository: run it in a new or a plain folder`);
  }
  const src = existsSync(template) && statSync(template).isDirectory() ? path.resolve(template) : path.join(templatesDir(), template);
  if (!existsSync(path.join(src, MANIFEST_FILE))) throw new HarnessError(`template "${template}" not found (no ${MANIFEST_FILE} in ${src}); available: ${listTemplates().join(', ')}`);
  const notes: string[] = [];
  // Built in a hidden staging folder and moved into place at the end: a crash leaves either
  // no harness or a complete one (plus a hidden leftover folder), never half of one. In place,
  // the staging folder is inside the target and its entries move in, .git last.
  const staging = inPlace
    ? path.join(target, `.evotrainer-init-${process.pid}`)
    : path.join(path.dirname(target), `.${path.basename(target)}.evotrainer-init-${process.pid}`);
  mkdirSync(path.dirname(target), { recursive: true });
  rmSync(staging, { recursive: true, force: true });
  cpSync(src, staging, { recursive: true, filter: (s) => !path.relative(src, s).split(path.sep).includes('.git') });
  try {
    if (inPlace) {
      const clash = readdirSync(staging).filter((e) => existsSync(path.join(target, e)));
      if (clash.length) throw new HarnessError(`${target} already has ${clash.join(', ')}, which the template "${template}" brings; move them aside (nothing was changed), then rerun`);
    }
    const r = await buildHarness(staging, src, notes);
    if (inPlace) {
      for (const e of readdirSync(staging).filter((e) => e !== '.git')) renameSync(path.join(staging, e), path.join(target, e));
      renameSync(path.join(staging, '.git'), path.join(target, '.git'));
      rmdirSync(staging);
    } else {
      if (existsSync(target)) rmdirSync(target); // empty (checked above)
      renameSync(staging, target);
    }
    return { ...r, harness: await openHarness(target), notes };
  } catch (e) {
    rmSync(staging, { recursive: true, force: true });
    throw e;
  }
}

async function buildHarness(target: string, src: string, notes: string[]): Promise<Omit<InitResult, 'harness' | 'notes'>> {
  const gitignore = path.join(target, '.gitignore');
  const ignore = existsSync(gitignore) ? readFileSync(gitignore, 'utf8') : '';
  if (!ignore.split('\n').some((l) => l.trim() === '.evotrainer/' || l.trim() === '.evotrainer')) writeFileSync(gitignore, `${ignore}${ignore && !ignore.endsWith('\n') ? '\n' : ''}.evotrainer/\n`);

  const manifestFile = path.join(target, MANIFEST_FILE);
  let text = readFileSync(manifestFile, 'utf8');
  const manifest = parseManifest(text, path.join(src, MANIFEST_FILE));
  let evalPinned: string | null = null;
  if (manifest.eval_set) {
    const evalFile = path.join(target, manifest.eval_set.path);
    if (existsSync(evalFile)) {
      evalPinned = hashContent(readFileSync(evalFile));
      if (manifest.eval_set.hash && manifest.eval_set.hash !== evalPinned) throw new HarnessError(`${path.join(src, MANIFEST_FILE)}: eval_set.hash ${manifest.eval_set.hash} does not match ${manifest.eval_set.path} (${evalPinned}); fix the template`);
      text = withEvalHash(text, evalPinned);
      writeFileSync(manifestFile, text);
    } else notes.push(`eval set ${manifest.eval_set.path} does not exist yet: add it and pin its hash (eval_set.hash) in v0 before creating versions`);
  }

  await git(target, ['init', '--quiet', '-b', 'main']);
  const h = await openHarness(target);
  await git(target, ['add', '-A']);
  await git(target, ['commit', '--quiet', '-F', '-'], { input: `v0: ${manifest.name} harness (template ${path.basename(src)})\n\nEvo-Version: v0\n`, env: h.commitEnv });
  const commit = await gitOut(target, ['rev-parse', 'HEAD']);
  const entry: LedgerEntry = {
    schema: 1,
    id: 'v0',
    branch: V0_BRANCH,
    parent: null,
    base: commit,
    commit,
    status: 'promoted',
    layer: 'reward',
    createdAt: nowIso(),
    hypothesis: null,
    intervention: null,
    metrics: {},
    primaryMetric: manifest.primary_metric ?? null,
    transitions: [{ from: null, to: 'promoted', at: nowIso(), by: h.actor, evidence: [{ kind: 'note', summary: `root version: the harness as created from template ${path.basename(src)}` }] }],
    decision: { version: 'v0', gate: 'promotion', decision: 'promote', reasons: [{ check: 'root', passed: true, detail: 'the root version is the baseline every version is compared with' }], decidedAt: nowIso(), decidedBy: 'human' },
  };
  const promoted: PromotedLine = { version: 'v0', commit, history: [{ version: 'v0', commit, at: nowIso(), by: h.actor, fastForward: true }] };
  await updateLedger(h, () => ({ entries: [entry], promoted, message: 'v0: root version, promoted' }));
  await casRef(target, `refs/heads/${V0_BRANCH}`, commit, ZERO_OID, 'evotrainer: v0');
  await casRef(target, PROMOTED_REF, commit, ZERO_OID, 'evotrainer: promote v0');
  await testPause('init:before-rename');
  return { commit, entry, evalPinned };
}
