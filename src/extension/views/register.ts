import * as vscode from 'vscode';
import type { VersioningHost } from '../commands/versions';
import type { EditorSession } from '../session';
import { lineageWebview, versionWebview } from '../versions/webviews';
import { parseVersionPath, VERSION_SCHEME } from '../diff/versionUri';
import type { SkillsNode, VersionNode } from './model';
import { FindingsTree, SkillsTree, VersionsTree, type VersionsElement } from './trees';
import { whenDone } from '../walkthrough';

/** A command's version argument: a tree node (context menu), an id (palette, tests), or nothing (pick). */
function versionId(arg: unknown): string | undefined {
  if (typeof arg === 'string' && /^v\d+$/.test(arg)) return arg;
  if (arg && typeof arg === 'object' && 'id' in arg && typeof (arg as VersionNode).id === 'string' && /^v\d+$/.test((arg as VersionNode).id)) return (arg as VersionNode).id;
  return undefined;
}

/**
 * Versions, Findings and Skills views, the version commands and the read-only
 * `evotrainer-version:` documents. Everything that touches git or the store goes through
 * `engine()`, so registering costs nothing until a view is shown or a command runs.
 */
export function registerVersioning(session: EditorSession): void {
  const { context, output, engine, root } = session;
  const versions = new VersionsTree(async () => {
    const r = root();
    return r ? engine().loadVersions(r) : null;
  }, output, 'Versions');
  const findings = new FindingsTree(async () => {
    const r = root();
    return r ? engine().loadFindings(r, session.selectedVersion(), { trust: vscode.workspace.isTrusted }) : null;
  }, output, 'Findings');
  const skills = new SkillsTree(async () => {
    const r = root();
    return r ? engine().loadSkills(r) : null;
  }, output, 'Skills');

  session.onRefresh(() => {
    versions.refresh();
    findings.refresh();
    skills.refresh();
  });
  const refresh = session.refresh;
  const versionsView = vscode.window.createTreeView<VersionsElement>('evotrainer.versions', { treeDataProvider: versions, showCollapseAll: true });
  const reveal = (id: string) => {
    void versions.current().then(async () => {
      const n = versions.node(id);
      if (n && versionsView.visible) await versionsView.reveal(n, { expand: true, select: false, focus: false });
    }).catch((err: unknown) => output.warn(`could not reveal ${id}: ${String(err)}`));
  };
  const host: VersioningHost = { ...session, reveal };

  context.subscriptions.push(
    versionsView,
    vscode.window.createTreeView('evotrainer.findings', { treeDataProvider: findings }),
    vscode.window.createTreeView('evotrainer.skills', { treeDataProvider: skills }),
    versionsView.onDidChangeSelection((e) => {
      const first = e.selection[0];
      // Sticky: a refresh that clears the selection keeps the findings on the last version chosen.
      const id = first && !('error' in first) ? first.id : null;
      if (!id || id === session.selectedVersion()) return;
      session.setSelectedVersion(id);
      findings.refresh();
    }),
    vscode.workspace.registerTextDocumentContentProvider(VERSION_SCHEME, {
      async provideTextDocumentContent(uri) {
        const ref = parseVersionPath(uri.path);
        const r = root();
        if (!ref || !r) return `(not a version file: ${uri.toString()})`;
        return (await engine().versionFile(r, ref.version, ref.file)) ?? '';
      },
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(refresh),
  );

  // The ledger and the promoted line move when the CLI runs too: watch the refs.
  const watcher = vscode.workspace.createFileSystemWatcher('**/.git/{refs/heads/evo/**,packed-refs}');
  context.subscriptions.push(watcher, watcher.onDidChange(refresh), watcher.onDidCreate(refresh), watcher.onDidDelete(refresh));
  const skillWatcher = vscode.workspace.createFileSystemWatcher('**/skills/*.md');
  context.subscriptions.push(skillWatcher, skillWatcher.onDidChange(() => skills.refresh()), skillWatcher.onDidCreate(() => skills.refresh()), skillWatcher.onDidDelete(() => skills.refresh()));

  const cmd = (id: string, run: (...args: unknown[]) => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id, run));
  cmd('evotrainer.initHarness', () => engine().initializeHarness(host).then(whenDone('harness')));
  cmd('evotrainer.importRollouts', (uri?: unknown) => engine().importRollouts(host, uri instanceof vscode.Uri ? uri : undefined).then(whenDone('imported')));
  cmd('evotrainer.newVersion', (arg?: unknown) => engine().newVersionCommand(host, { parent: versionId(arg) }).then(whenDone('version')));
  cmd('evotrainer.newVersionFromFinding', (arg?: unknown) => engine().newVersionCommand(host, { parent: versionId(arg), fromFinding: true }).then(whenDone('version')));
  cmd('evotrainer.compareVersions', (a?: unknown, b?: unknown) => engine().compareVersions(host, versionId(a), versionId(b)));
  cmd('evotrainer.openVersionDiff', (arg?: unknown) => engine().openVersionDiff(host, versionId(arg)));
  cmd('evotrainer.showVersionEvidence', async (arg?: unknown) => {
    const id = versionId(arg) ?? session.selectedVersion();
    if (!id) {
      void vscode.window.showInformationMessage('EvoTrainer: select a version in the Versions view first.');
      return;
    }
    return session.webviews.show(versionWebview, undefined, { key: id, preserveFocus: true });
  });
  cmd('evotrainer.promoteVersion', (arg?: unknown) => engine().promoteCommand(host, versionId(arg)));
  cmd('evotrainer.rejectVersion', (arg?: unknown) => engine().rejectCommand(host, versionId(arg)));
  cmd('evotrainer.recordSkill', (arg?: unknown) => engine().recordSkillCommand(host, versionId(arg)));
  cmd('evotrainer.cherryPickSkill', (arg?: unknown) => engine().cherryPickSkill(host, typeof arg === 'string' ? arg : (arg as SkillsNode | undefined)));
  cmd('evotrainer.applySkill', (arg?: unknown) => engine().cherryPickSkill(host, arg as SkillsNode | undefined));
  cmd('evotrainer.showSkillEvidence', (arg?: unknown) => engine().showSkillEvidence(arg as SkillsNode | undefined));
  cmd('evotrainer.openLineageGraph', () => session.webviews.show(lineageWebview, undefined));
}
