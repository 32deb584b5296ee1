import path from 'node:path';
import * as vscode from 'vscode';
import { readLedger, type LedgerEntry } from '../../core/harness/ledger';
import { initHarness, listTemplates } from '../../core/harness/init';
import { diffVersions } from '../../core/harness/lineage';
import { HarnessError, openHarness, type Harness } from '../../core/harness/repo';
import { applySkill, findSkill, listSkills, recordSkill, SKILL_CATEGORIES, type ApplyOutcome } from '../../core/harness/skills';
import { GateError, promoteVersion } from '../../core/gate';
import { LAYERS, newVersion, rejectVersion, slugify } from '../../core/harness/versions';
import type { Finding, Layer } from '../../core/model';
import { defaultStorePath, RolloutStore, type ImportSummary } from '../../core/store/store';
import { versionPath, VERSION_SCHEME } from '../diff/versionUri';
import { loadFindings, skillDirs } from '../views/data';
import { versionWebview } from '../versions/webviews';
import { requireTrust, type EditorSession } from '../session';
import type { SkillsNode } from '../views/model';
import { hypothesisFromFinding } from './findingHypothesis';
import { describePreview, previewSkillApply, type ApplyPreview } from './skillPreview';

/**
 * The version-control commands of the editor: initialize, import, new version, compare,
 * promote, reject, record and cherry-pick skills. Each runs the engine (this bundle is
 * loaded on first use) and reports a typed outcome; anything that runs git in the
 * harness (whose hooks and config are code) needs a trusted workspace.
 */
export interface VersioningHost extends EditorSession {
  /** Shows a version in the Versions view (after creating it). */
  reveal(id: string): void;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function harnessOf(host: VersioningHost): Promise<Harness | null> {
  const root = host.root();
  if (!root) {
    void vscode.window.showErrorMessage('EvoTrainer: open a harness (a folder with evotrainer.yaml) first, or create one with "EvoTrainer: Initialize Harness…".');
    return null;
  }
  return { ...(await openHarness(root)), onRepair: (m) => host.output.info(`resumed: ${m}`) };
}

/** Reports a failure once: the output channel keeps the whole message, the toast its first line. */
function fail(host: VersioningHost, what: string, err: unknown): void {
  const text = message(err);
  host.output.error(`${what}: ${text}`);
  const [first, ...rest] = text.split('\n');
  void vscode.window.showErrorMessage(`EvoTrainer: ${what}: ${first}`, ...(rest.length ? ['Show Details'] : [])).then((p) => {
    if (p) host.output.show(true);
  });
}

interface VersionPick extends vscode.QuickPickItem {
  entry: LedgerEntry;
}

async function pickVersion(h: Harness, placeHolder: string, filter: (e: LedgerEntry) => boolean, preferred?: string | null): Promise<LedgerEntry | undefined> {
  const ledger = await readLedger(h);
  const items: VersionPick[] = [...ledger.entries.values()]
    .filter(filter)
    .sort((a, b) => Number(b.id.slice(1)) - Number(a.id.slice(1)))
    .map((e) => ({
      label: `${e.id}${ledger.promoted?.version === e.id ? ' ★' : ''}`,
      description: `${e.status} · ${e.branch}`,
      detail: e.hypothesis?.change ?? (e.parent ? undefined : 'root version'),
      entry: e,
    }));
  if (!items.length) {
    void vscode.window.showInformationMessage(`EvoTrainer: no version to choose (${placeHolder.toLowerCase()}).`);
    return undefined;
  }
  const pref = items.findIndex((i) => i.entry.id === preferred);
  if (pref > 0) items.unshift(...items.splice(pref, 1));
  return (await vscode.window.showQuickPick(items, { placeHolder, matchOnDescription: true, matchOnDetail: true }))?.entry;
}

async function entryOrPick(h: Harness, id: string | undefined, placeHolder: string, filter: (e: LedgerEntry) => boolean, preferred?: string | null): Promise<LedgerEntry | undefined> {
  if (id) {
    const e = (await readLedger(h)).entries.get(id as LedgerEntry['id']);
    if (!e) throw new HarnessError(`no version ${id} in the ledger`);
    return e;
  }
  return pickVersion(h, placeHolder, filter, preferred);
}

// ---------------------------------------------------------------- initialize / import

export async function initializeHarness(host: VersioningHost): Promise<string | undefined> {
  if (!requireTrust('Initialize Harness')) return undefined;
  try {
    const template = await vscode.window.showQuickPick(
      listTemplates().map((t) => ({ label: t })),
      { placeHolder: 'Template for the new harness', title: 'Initialize Harness (1/3)' },
    );
    if (!template) return undefined;
    const parent = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, canSelectMany: false, openLabel: 'Create the harness in this folder', title: 'Initialize Harness (2/3): parent folder', defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri });
    if (!parent?.[0]) return undefined;
    const name = await vscode.window.showInputBox({
      title: 'Initialize Harness (3/3)',
      prompt: `Name of the new folder under ${parent[0].fsPath}`,
      value: `${template.label}-harness`,
      validateInput: (v) => (!v.trim() ? 'a folder name is needed' : /[\\/]/.test(v) ? 'one folder name, no slashes' : undefined),
    });
    if (!name) return undefined;
    const dir = path.join(parent[0].fsPath, name.trim());
    const r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `EvoTrainer: creating ${dir}` }, () => initHarness(dir, template.label));
    host.output.info(`initialized ${dir} from template ${template.label}: v0 ${r.commit.slice(0, 12)}${r.notes.length ? `; ${r.notes.join('; ')}` : ''}`);
    const pick = await vscode.window.showInformationMessage(`EvoTrainer: harness created in ${dir} (v0 promoted).${r.notes.length ? ` ${r.notes[0]}` : ''}`, 'Open Folder', 'Add to Workspace');
    if (pick === 'Open Folder') await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(dir));
    else if (pick === 'Add to Workspace') vscode.workspace.updateWorkspaceFolders(vscode.workspace.workspaceFolders?.length ?? 0, 0, { uri: vscode.Uri.file(dir) });
    host.refresh();
    return dir;
  } catch (err) {
    fail(host, 'Initialize Harness failed', err);
    return undefined;
  }
}

/** The import's summary; undefined when cancelled or failed. */
export async function importRollouts(host: VersioningHost, given?: vscode.Uri): Promise<ImportSummary | undefined> {
  const root = host.root();
  if (!root) {
    void vscode.window.showErrorMessage('EvoTrainer: open a harness (a folder with evotrainer.yaml) to import rollouts into its store.');
    return;
  }
  if (!requireTrust('Import Rollouts')) return;
  const picked = given ? [given] : await vscode.window.showOpenDialog({ canSelectFiles: true, canSelectFolders: true, canSelectMany: true, openLabel: 'Import', title: 'Import Rollouts: dump files or folders (format detected)' });
  if (!picked?.length) return;
  const run = await vscode.window.showInputBox({ title: 'Import Rollouts', prompt: 'Run name (the rollouts are grouped by run)', value: path.basename(picked[0]!.fsPath).replace(/\.[^.]+$/, '') });
  if (run === undefined) return;
  const ledger = await readLedger(await openHarness(root)).catch(() => null);
  let version: string | null = null;
  if (ledger?.entries.size) {
    const items = [{ label: '(none)', description: 'not produced by a harness version' }, ...[...ledger.entries.values()].sort((a, b) => Number(b.id.slice(1)) - Number(a.id.slice(1))).map((e) => ({ label: e.id, description: `${e.status} · ${e.branch}` }))];
    const v = await vscode.window.showQuickPick(items, { title: 'Import Rollouts', placeHolder: 'Which harness version produced them?' });
    if (!v) return;
    version = v.label === '(none)' ? null : v.label;
  }
  const paths = picked.map((u) => u.fsPath);
  try {
    const summary = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'EvoTrainer: importing rollouts', cancellable: true }, async (progress, token) => {
      const abort = new AbortController();
      token.onCancellationRequested(() => abort.abort());
      const store = await RolloutStore.open(defaultStorePath(root));
      try {
        return await store.import(paths, {
          run: run.trim() || undefined,
          version,
          signal: abort.signal,
          onProgress: ({ file, rollouts }) => progress.report({ message: `${rollouts} rollouts from ${path.basename(file)}` }),
        });
      } finally {
        store.close();
      }
    });
    const imported = summary.files.filter((f) => f.status === 'imported').length;
    host.output.info(`imported ${summary.rollouts} rollouts (${summary.steps} steps) from ${imported} file(s) into ${defaultStorePath(root)}; ${summary.ignored.length} not imported`);
    for (const f of summary.ignored) host.output.info(`  not imported: ${f.file}: ${f.reason}`);
    void vscode.window.showInformationMessage(`EvoTrainer: imported ${summary.rollouts} rollouts from ${imported} file(s)${summary.ignored.length ? `; ${summary.ignored.length} file(s) not imported (the EvoTrainer output lists each with why)` : ''}.`);
    host.refresh();
    return summary;
  } catch (err) {
    fail(host, 'Import failed (the store is as it was before)', err);
    return undefined;
  }
}

// ---------------------------------------------------------------- new version

export async function newVersionCommand(host: VersioningHost, opts: { parent?: string; fromFinding?: boolean } = {}): Promise<string | undefined> {
  if (!requireTrust('New Version')) return undefined;
  try {
    const h = await harnessOf(host);
    if (!h) return undefined;
    let seed: ReturnType<typeof hypothesisFromFinding> | null = null;
    if (opts.fromFinding) {
      const model = await loadFindings(h.root, host.selectedVersion(), { trust: vscode.workspace.isTrusted });
      const findings = model ? [...model.children.values()].flat().filter((n) => n.kind === 'finding').map((n) => (n.kind === 'finding' ? n.finding : null)).filter((f): f is Finding => Boolean(f)) : [];
      if (!findings.length) {
        void vscode.window.showInformationMessage('EvoTrainer: no findings for the selected version or the latest run; import rollouts first ("EvoTrainer: Import Rollouts…").');
        return undefined;
      }
      const f = await vscode.window.showQuickPick(
        findings.map((x) => ({ label: `${x.rule} ${x.title}`, description: x.severity, detail: x.suggestion, finding: x })),
        { title: 'New Version from Finding (1/5)', placeHolder: 'The finding the version answers', matchOnDetail: true },
      );
      if (!f) return undefined;
      seed = hypothesisFromFinding(f.finding);
    }
    const ledger = await readLedger(h);
    const parent = await entryOrPick(h, opts.parent, 'Parent version (the new version branches from it)', (e) => e.status !== 'rejected', ledger.promoted?.version);
    if (!parent) return undefined;
    const hypothesis = await vscode.window.showInputBox({
      title: 'New Version: hypothesis',
      prompt: 'Exactly one: "If we change X, metric Y improves because Z"',
      value: seed?.hypothesis ?? 'If we change ',
      validateInput: (v) => (v.trim().length < 8 ? 'state one falsifiable hypothesis' : undefined),
    });
    if (!hypothesis) return undefined;
    const targetMetric = await vscode.window.showInputBox({ title: 'New Version: target metric', prompt: 'The metric Y expected to move', value: seed?.targetMetric ?? parent.primaryMetric ?? '', validateInput: (v) => (/^[A-Za-z_][\w.@-]*$/.test(v.trim()) ? undefined : 'a metric name such as dead_group_ratio') });
    if (!targetMetric) return undefined;
    const success = await vscode.window.showInputBox({ title: 'New Version: success criterion', prompt: 'Falsifiable, machine-checkable: METRIC OP NUMBER', value: seed?.success ?? `${targetMetric} > 0`, validateInput: (v) => (v.trim() ? undefined : 'a criterion is needed') });
    if (!success) return undefined;
    const layers = LAYERS.map((l) => ({ label: l, picked: l === seed?.layer }));
    if (seed) layers.unshift(...layers.splice(layers.findIndex((l) => l.label === seed!.layer), 1));
    const layer = await vscode.window.showQuickPick(layers, { title: 'New Version: layer', placeHolder: 'The harness layer the single factor lives in' });
    if (!layer) return undefined;
    const r = await newVersion(h, { parent: parent.id, hypothesis, targetMetric: targetMetric.trim(), success: success.trim(), layer: layer.label as Layer, because: seed?.because, worktree: true });
    host.output.info(`${r.entry.id} proposed on ${r.entry.branch} from ${parent.id}; worktree ${r.worktree}`);
    host.refresh();
    host.reveal(r.entry.id);
    const pick = await vscode.window.showInformationMessage(`EvoTrainer: ${r.entry.id} proposed on ${r.entry.branch}. Make the single-factor change in its worktree, then commit it with \`evotrainer version commit ${r.entry.id}\`.`, 'Open Worktree in New Window');
    if (pick && r.worktree) await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(r.worktree), { forceNewWindow: true });
    return r.entry.id;
  } catch (err) {
    fail(host, 'New version failed', err);
    return undefined;
  }
}

// ---------------------------------------------------------------- diffs

export function versionUri(version: string, file: string): vscode.Uri {
  return vscode.Uri.from({ scheme: VERSION_SCHEME, path: versionPath({ version, file }) });
}

/** Native diff of one file between two versions (read-only documents of the custom scheme). */
export async function openFileDiff(from: string, to: string, file: string): Promise<void> {
  await vscode.commands.executeCommand('vscode.diff', versionUri(from, file), versionUri(to, file), `${file} (${from} ↔ ${to})`, { preview: false, preserveFocus: false });
}

export async function openVersionDiff(host: VersioningHost, id?: string): Promise<void> {
  try {
    const h = await harnessOf(host);
    if (!h) return;
    const entry = await entryOrPick(h, id, 'Version whose intervention to review', (e) => e.parent !== null && e.commit !== e.base, host.selectedVersion());
    if (!entry || !entry.parent) return;
    const d = await diffVersions(h, entry.parent, entry.id);
    if (!d.files.length) {
      void vscode.window.showInformationMessage(`EvoTrainer: ${entry.id} changes nothing relative to ${entry.parent}.`);
      return;
    }
    await openFileDiff(entry.parent, entry.id, d.files[0]!.path);
    await host.webviews.show(versionWebview, undefined, { key: entry.id, column: vscode.ViewColumn.Beside, preserveFocus: true });
  } catch (err) {
    fail(host, 'Open Diff failed', err);
  }
}

export async function compareVersions(host: VersioningHost, a?: string, b?: string): Promise<void> {
  try {
    const h = await harnessOf(host);
    if (!h) return;
    const left = await entryOrPick(h, a, 'Compare: the first (left) version', () => true, host.selectedVersion());
    if (!left) return;
    const right = await entryOrPick(h, b, `Compare ${left.id} with…`, (e) => e.id !== left.id);
    if (!right) return;
    const d = await diffVersions(h, left.id, right.id);
    if (!d.files.length) {
      void vscode.window.showInformationMessage(`EvoTrainer: ${left.id} and ${right.id} have the same tree.`);
      return;
    }
    const all = { label: '$(diff-multiple) All changed files', description: `${d.files.length} files in one multi-file diff`, file: null as string | null };
    const items = [all, ...d.files.map((f) => ({ label: f.path, description: f.status === 'A' ? 'added' : f.status === 'D' ? 'deleted' : f.status === 'M' ? 'modified' : f.status, file: f.path as string | null }))];
    const pick = await vscode.window.showQuickPick(items, { title: `Compare ${left.id} ↔ ${right.id}`, placeHolder: 'A changed file to open in the diff editor' });
    if (!pick) return;
    if (pick.file) return openFileDiff(left.id, right.id, pick.file);
    const resources = d.files.map((f) => [versionUri(right.id, f.path), versionUri(left.id, f.path), versionUri(right.id, f.path)]);
    try {
      await vscode.commands.executeCommand('vscode.changes', `${left.id} ↔ ${right.id}`, resources);
    } catch {
      for (const f of d.files) await openFileDiff(left.id, right.id, f.path);
    }
  } catch (err) {
    fail(host, 'Compare Versions failed', err);
  }
}

// ---------------------------------------------------------------- decisions

export async function promoteCommand(host: VersioningHost, id?: string): Promise<string | undefined> {
  if (!requireTrust('Promote Version')) return undefined;
  let h: Harness | null = null;
  let entry: LedgerEntry | undefined;
  try {
    h = await harnessOf(host);
    if (!h) return undefined;
    entry = await entryOrPick(h, id, 'Version to promote (runs the promotion gate)', (e) => e.status === 'evaluated', host.selectedVersion());
    if (!entry) return undefined;
    const r = await promoteVersion(h, entry.id);
    host.output.info(`${entry.id} promoted (${r.decision.decidedBy}): ${r.decision.reasons.map((x) => `${x.passed ? 'ok' : 'FAIL'} ${x.check}`).join('; ')}`);
    void vscode.window.showInformationMessage(`EvoTrainer: ${entry.id} promoted; evo/promoted → ${r.entry.commit.slice(0, 12)}.`);
    host.refresh();
    return 'promoted';
  } catch (err) {
    if (err instanceof GateError && h && entry) {
      const failed = err.decision.reasons.filter((r) => !r.passed);
      host.output.warn(err.message);
      const pick = await vscode.window.showWarningMessage(
        `The promotion gate does not pass ${entry.id}; nothing was changed.`,
        { modal: true, detail: failed.map((r) => `✗ ${r.check}: ${r.detail}`).join('\n') },
        'Promote Anyway…',
        'Reject…',
      );
      if (pick === 'Reject…') return rejectCommand(host, entry.id);
      if (pick === 'Promote Anyway…') {
        const reason = await vscode.window.showInputBox({ title: `Promote ${entry.id} despite the gate`, prompt: 'Why (recorded in the ledger as a human override)', validateInput: (v) => (v.trim() ? undefined : 'a reason is required') });
        if (!reason) return undefined;
        try {
          await promoteVersion(h, entry.id, { override: reason });
          void vscode.window.showInformationMessage(`EvoTrainer: ${entry.id} promoted by override.`);
          host.refresh();
          return 'promoted';
        } catch (e2) {
          fail(host, 'Promote failed', e2);
        }
      }
      return undefined;
    }
    fail(host, 'Promote failed', err);
    return undefined;
  }
}

export async function rejectCommand(host: VersioningHost, id?: string): Promise<string | undefined> {
  if (!requireTrust('Reject Version')) return undefined;
  try {
    const h = await harnessOf(host);
    if (!h) return undefined;
    const entry = await entryOrPick(h, id, 'Version to reject (its branch stays as negative evidence)', (e) => e.parent !== null && e.status !== 'promoted' && e.status !== 'rejected', host.selectedVersion());
    if (!entry) return undefined;
    const reason = await vscode.window.showInputBox({
      title: `Reject ${entry.id}`,
      prompt: 'Why? Rejected versions are negative evidence; the reason is what others will read.',
      placeHolder: 'e.g. pass_rate regressed 4 points; the penalty taught the agent to stop early',
      validateInput: (v) => (v.trim() ? undefined : 'a reason is required'),
    });
    if (!reason) return undefined;
    const e = await rejectVersion(h, entry.id, reason);
    host.output.info(`${e.id} rejected: ${e.rejectReason}`);
    void vscode.window.showInformationMessage(`EvoTrainer: ${e.id} rejected; ${e.branch} is kept as negative evidence.`);
    host.refresh();
    return 'rejected';
  } catch (err) {
    fail(host, 'Reject failed', err);
    return undefined;
  }
}

// ---------------------------------------------------------------- skills

export async function recordSkillCommand(host: VersioningHost, id?: string): Promise<string | undefined> {
  if (!requireTrust('Record Skill')) return undefined;
  try {
    const h = await harnessOf(host);
    if (!h) return undefined;
    const entry = await entryOrPick(h, id, 'Promoted version to distil into a skill', (e) => e.status === 'promoted' && e.parent !== null && e.commit !== e.base, host.selectedVersion());
    if (!entry) return undefined;
    let created: { file: string; id: string; created: boolean };
    if (entry.skill) {
      const r = await recordSkill(h, { from: entry.id, library: skillDirs(h.root).library });
      created = { file: r.skill.file, id: r.skill.record.id, created: r.created };
    } else {
      const category = await vscode.window.showQuickPick(SKILL_CATEGORIES.map((c) => ({ label: c })), { title: `Record Skill from ${entry.id} (1/3)`, placeHolder: 'Category' });
      if (!category) return undefined;
      const trigger = await vscode.window.showInputBox({ title: `Record Skill from ${entry.id} (2/3)`, prompt: 'Trigger: the condition (over metrics/findings) under which to use it', placeHolder: 'dead_group_ratio > 0.5 and the reward is discrete', validateInput: (v) => (v.trim() ? undefined : 'a trigger is required') });
      if (!trigger) return undefined;
      const skillId = await vscode.window.showInputBox({ title: `Record Skill from ${entry.id} (3/3)`, prompt: 'Skill id (file name under skills/)', value: slugify(entry.hypothesis?.change ?? entry.id), validateInput: (v) => (/^[a-z0-9][a-z0-9._-]*$/.test(v) ? undefined : 'lowercase letters, digits, ".", "_" or "-"') });
      if (!skillId) return undefined;
      const r = await recordSkill(h, { from: entry.id, id: skillId, category: category.label, trigger, library: skillDirs(h.root).library });
      created = { file: r.skill.file, id: r.skill.record.id, created: r.created };
    }
    host.output.info(`${created.created ? 'recorded' : 'added evidence to'} skill ${created.id} → ${created.file}`);
    host.refresh();
    await vscode.window.showTextDocument(vscode.Uri.file(created.file), { preview: false });
    void vscode.window.showInformationMessage(`EvoTrainer: ${created.created ? 'recorded' : 'added evidence to'} skill ${created.id}. Commit skills/ to keep it with the harness.`);
    return created.id;
  } catch (err) {
    fail(host, 'Record Skill failed', err);
    return undefined;
  }
}

export async function showSkillEvidence(node?: SkillsNode): Promise<void> {
  if (!node || node.kind !== 'skill') return;
  await vscode.window.showTextDocument(vscode.Uri.file(node.skill.file), { preview: true });
}

/** The wizard's outcome, typed as the engine reports it (plus the dry run's refusals). */
export type CherryPickResult = { outcome: 'cancelled' } | ApplyOutcome | { outcome: 'blocked'; preview: ApplyPreview };

/**
 * "Cherry-pick Skill…": pick skill → pick target version → dry run (conflicts and boundary
 * refusals are shown BEFORE anything changes) → confirm → the typed outcome.
 */
export async function cherryPickSkill(host: VersioningHost, preselected?: SkillsNode | string): Promise<CherryPickResult> {
  const cancelled = { outcome: 'cancelled' } as const;
  if (!requireTrust('Cherry-pick Skill')) return cancelled;
  try {
    const h = await harnessOf(host);
    if (!h) return cancelled;
    const dirs = skillDirs(h.root);
    let skillId = typeof preselected === 'string' ? preselected : preselected?.kind === 'skill' ? preselected.skill.id : undefined;
    if (!skillId) {
      const { skills, problems } = listSkills(dirs);
      for (const p of problems) host.output.warn(`skipped a skill file: ${p}`);
      if (!skills.length) {
        void vscode.window.showInformationMessage('EvoTrainer: no skills yet. Record one from a promoted version ("EvoTrainer: Record Skill from Version").');
        return cancelled;
      }
      const pick = await vscode.window.showQuickPick(
        skills.map((s) => ({ label: s.record.id, description: `${s.record.category} · ${s.record.domains.join(', ')}${s.origin === 'library' ? ' · library' : ''}`, detail: `${s.record.title} — trigger: ${s.record.trigger}` })),
        { title: 'Cherry-pick Skill (1/3)', placeHolder: 'Skill to apply', matchOnDescription: true, matchOnDetail: true },
      );
      if (!pick) return cancelled;
      skillId = pick.label;
    }
    const skill = findSkill(skillId, dirs);
    const ledger = await readLedger(h);
    const onto = await pickVersion(h, `Cherry-pick Skill (2/3): apply ${skill.record.id} onto…`, (e) => e.status !== 'rejected', ledger.promoted?.version);
    if (!onto) return cancelled;
    const preview = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `EvoTrainer: checking ${skill.record.id} against ${onto.id}` }, () => previewSkillApply(h, skill, onto.id));
    const summary = describePreview(preview, skill.record.id, onto.id);
    host.output.info(`cherry-pick dry run: ${summary}`);
    if (preview.outcome !== 'clean') {
      const detail =
        preview.outcome === 'conflict'
          ? `Conflicting files:\n${preview.files.map((f) => `  ${f}`).join('\n')}\n\nTo adapt it by hand: New Version… on ${onto.id}, then apply the skill's patch in its worktree with \`git apply --3way\` and resolve.`
          : preview.outcome === 'refused'
            ? preview.violations.map((v) => `${v.path} [${v.rule}] ${v.detail}`).join('\n')
            : 'Nothing was changed.';
      await vscode.window.showWarningMessage(`Cherry-pick Skill (3/3): ${summary}`, { modal: true, detail });
      return { outcome: 'blocked', preview };
    }
    const ok = await vscode.window.showInformationMessage(`Cherry-pick Skill (3/3): ${summary}`, { modal: true, detail: `Files: ${preview.files.join(', ')}\nThe new version is proposed; backtest it before training.` }, 'Apply');
    if (ok !== 'Apply') return cancelled;
    const r = await applySkill(h, skill, { onto: onto.id });
    host.output.info(`cherry-pick ${skill.record.id} onto ${onto.id}: ${r.outcome}; ${r.next}`);
    if (r.outcome === 'clean') void vscode.window.showInformationMessage(`EvoTrainer: applied clean: ${r.version} on ${r.branch}.`);
    else if (r.outcome === 'conflict') void vscode.window.showWarningMessage(`EvoTrainer: conflict in ${r.files.join(', ')}; nothing was changed.`);
    else if (r.outcome === 'refused') void vscode.window.showErrorMessage(`EvoTrainer: refused by the action boundary: ${r.violations.map((v) => v.path).join(', ')}.`);
    else void vscode.window.showWarningMessage(`EvoTrainer: ${r.outcome}: ${r.next}`);
    host.refresh();
    if (r.outcome === 'clean') host.reveal(r.version);
    return r;
  } catch (err) {
    fail(host, 'Cherry-pick failed', err);
    return cancelled;
  }
}
