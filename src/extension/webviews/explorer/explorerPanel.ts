import * as vscode from 'vscode';
import { findHarnessRoot } from '../../../core/harness/locate';
import { defaultStorePath, RolloutStore } from '../../../core/store/store';
import { WebviewController } from '../webviewController';
import { ExplorerBackend } from '../../../viewer/explorer/backend';
import { ExplorerMethods, ExplorerStateNotification, OpenExplorerArgsSchema, type ExplorerState, type OpenExplorerArgs } from '../../../viewer/explorer/protocol';

/** The store of the harness open in the editor (the first workspace folder holding one). */
function workspaceStore(): string | null {
  for (const f of vscode.workspace.workspaceFolders ?? []) {
    const root = findHarnessRoot(f.uri.fsPath);
    if (root) return defaultStorePath(root);
  }
  return null;
}

/** The store is closed after this long without a request, so the CLI can import meanwhile. */
const IDLE_CLOSE_MS = 60_000;

/**
 * "EvoTrainer: Open Failure Explorer" (args optional: {failureMode, run, version,
 * rolloutId}): the failure-mode histogram, the rollouts table and the trajectory viewer
 * over the workspace harness's rollout store.
 */
export class ExplorerPanel {
  private static current: ExplorerPanel | undefined;

  static async show(context: vscode.ExtensionContext, output: vscode.LogOutputChannel, rawArgs?: unknown): Promise<ExplorerState> {
    let args: OpenExplorerArgs = {};
    if (rawArgs !== undefined && rawArgs !== null) {
      const parsed = OpenExplorerArgsSchema.safeParse(rawArgs);
      if (!parsed.success) {
        const msg = `Open Failure Explorer: ignored its arguments (${parsed.error.message.replace(/\s+/g, ' ').slice(0, 200)}); expected {failureMode?, run?, version?, step?, rolloutId?}.`;
        output.warn(msg);
        void vscode.window.showWarningMessage(msg);
      } else {
        args = parsed.data;
      }
    }
    const storePath = workspaceStore();
    if (!ExplorerPanel.current) {
      // Kept alive while hidden: the table's pages, its scroll position and the open trajectory survive a tab switch.
      const panel = vscode.window.createWebviewPanel('evotrainer.explorer', 'EvoTrainer: Failures', vscode.ViewColumn.Active, { retainContextWhenHidden: true });
      panel.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'evotrainer.svg');
      const initial: ExplorerState = { status: 'loading', store: storePath, error: null, facets: null, filter: {}, sort: { column: 'id', descending: false }, page: null, histogram: [], openRolloutId: null, openRolloutPosition: null };
      ExplorerPanel.current = new ExplorerPanel(new WebviewController<ExplorerState>(panel, context.extensionUri, { app: 'explorer', title: 'EvoTrainer: Failures', initialState: initial, log: output }), output, storePath);
    } else {
      ExplorerPanel.current.controller.panel.reveal();
    }
    return ExplorerPanel.current.load(args);
  }

  private readonly backend: ExplorerBackend | null;

  private constructor(
    private readonly controller: WebviewController<ExplorerState>,
    private readonly output: vscode.LogOutputChannel,
    private readonly storePath: string | null,
  ) {
    this.backend = storePath
      ? new ExplorerBackend({
          open: () => RolloutStore.open(storePath),
          storeLabel: storePath,
          idleCloseMs: IDLE_CLOSE_MS,
          log: (level, m) => output[level](m),
        })
      : null;
    controller.onDidDispose(() => {
      void this.backend?.dispose();
      if (ExplorerPanel.current === this) ExplorerPanel.current = undefined;
    });
    if (this.backend) controller.serve(ExplorerMethods, this.backend.methods);
  }

  private async load(args: OpenExplorerArgs): Promise<ExplorerState> {
    let state: ExplorerState;
    if (!this.backend) {
      state = { status: 'empty', store: null, error: 'No harness in this workspace: open a folder with an evotrainer.yaml.', facets: null, filter: {}, sort: { column: 'id', descending: false }, page: null, histogram: [], openRolloutId: null, openRolloutPosition: null };
    } else {
      const backend = this.backend;
      state = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'EvoTrainer: indexing rollouts for the failure explorer' }, () => backend.state(args));
      if (state.status === 'failed') this.output.error(`Failure explorer: ${state.error}`);
      else this.output.info(`Failure explorer: ${state.facets?.rollouts ?? 0} rollouts${args.failureMode ? `, filtered to ${args.failureMode}` : ''}${args.step !== undefined ? `, step ${args.step}` : ''}`);
    }
    this.controller.notify(ExplorerStateNotification, state);
    return { ...state, page: state.page ? { ...state.page, rows: [] } : null };
  }
}
