import path from 'node:path';
import * as vscode from 'vscode';
import { findHarnessRoot } from '../core/harness/locate';
import { WebviewHost } from './webviews/host';

/** The engine bundle (dist/panels.js): the store, git, diagnostics and the features' host code. Type-only here. */
export type Engine = typeof import('./panels');

/**
 * What every editor feature shares, made once at activation and passed to each feature's
 * `register`: the workspace's harness and its store, workspace trust, the engine bundle
 * (loaded on first use), the webview host, and the views' refresh. Features read these
 * from here rather than deriving them again.
 */
export interface EditorSession {
  readonly context: vscode.ExtensionContext;
  readonly output: vscode.LogOutputChannel;
  /** The harness of the workspace (the first folder, or a parent of it, holding an evotrainer.yaml), or null. Read at each call: folders change. */
  root(): string | null;
  /** That harness's rollout store file, or null. */
  storePath(): string | null;
  /** True in a trusted workspace; otherwise says what needs trust (and how to grant it) and returns false. */
  requireTrust(what: string): boolean;
  /** The engine bundle, required on first call. */
  engine(): Engine;
  /** The one place webview panels are created and tracked. */
  readonly webviews: WebviewHost;
  /** Redraws the views and the open panels (after a decision, an import, a new version). */
  refresh(): void;
  /** Adds a view (or anything) redrawn by `refresh()`. */
  onRefresh(listener: () => void): void;
  /** The version chosen in the Versions view, whose findings the Findings view shows. */
  selectedVersion(): string | null;
  setSelectedVersion(id: string | null): void;
}

/** The harness of the workspace: the first folder (or a parent of it) holding an evotrainer.yaml. */
export function workspaceHarnessRoot(): string | null {
  for (const f of vscode.workspace.workspaceFolders ?? []) {
    const root = findHarnessRoot(f.uri.fsPath);
    if (root) return root;
  }
  return null;
}

/** Runs harness code or git in the harness only in a trusted workspace; says so otherwise. */
export function requireTrust(what: string): boolean {
  if (vscode.workspace.isTrusted) return true;
  void vscode.window.showErrorMessage(`EvoTrainer: ${what} runs git and harness code in this folder, which needs a trusted workspace. Trust the folder (Manage Workspace Trust), then run it again.`, 'Manage Workspace Trust').then((pick) => {
    if (pick) void vscode.commands.executeCommand('workbench.trust.manage');
  });
  return false;
}

export function createSession(context: vscode.ExtensionContext, output: vscode.LogOutputChannel): EditorSession {
  const listeners: (() => void)[] = [];
  let selected: string | null = null;
  const session: EditorSession = {
    context,
    output,
    root: workspaceHarnessRoot,
    storePath: () => {
      const r = workspaceHarnessRoot();
      return r ? session.engine().defaultStorePath(r) : null;
    },
    requireTrust,
    engine: () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      return require(path.join(__dirname, 'panels.js')) as Engine;
    },
    webviews: undefined as unknown as WebviewHost,
    refresh: () => {
      for (const l of listeners) {
        try {
          l();
        } catch (err) {
          output.error(`refreshing: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      session.webviews.refreshAll();
    },
    onRefresh: (l) => void listeners.push(l),
    selectedVersion: () => selected,
    setSelectedVersion: (id) => {
      selected = id;
    },
  };
  (session as { webviews: WebviewHost }).webviews = new WebviewHost(session);
  context.subscriptions.push(session.webviews);
  return session;
}
