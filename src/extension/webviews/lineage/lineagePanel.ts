import * as vscode from 'vscode';
import type { VersioningHost } from '../../commands/versions';
import { loadVersions } from '../../views/data';
import { WebviewController } from '../webviewController';
import { layoutLineage } from './layout';
import { DidChangeLineageNotification, LineageMethods, type LineageState } from '../../../viewer/lineage/protocol';

const EMPTY: LineageState = { status: 'loading', harness: null, metric: null, promoted: null, nodes: [], edges: [], width: 0, height: 0, error: null };

/** "EvoTrainer: Open Lineage Graph": the version tree with scores, the promoted path, rejected branches. */
export class LineagePanel {
  private static current: LineagePanel | undefined;

  static async show(host: VersioningHost): Promise<LineageState> {
    if (!LineagePanel.current) {
      const panel = vscode.window.createWebviewPanel('evotrainer.lineage', 'EvoTrainer: Lineage', vscode.ViewColumn.Active, { retainContextWhenHidden: false });
      panel.iconPath = vscode.Uri.joinPath(host.context.extensionUri, 'media', 'evotrainer.svg');
      LineagePanel.current = new LineagePanel(new WebviewController<LineageState>(panel, host.context.extensionUri, { app: 'lineage', title: 'EvoTrainer: Lineage', initialState: { ...EMPTY, harness: host.root() }, log: host.output }), host);
    } else LineagePanel.current.controller.panel.reveal();
    return LineagePanel.current.refresh();
  }

  /** Redraws an open graph (after a promotion, a rejection, a new version). */
  static refreshIfOpen(): void {
    void LineagePanel.current?.refresh();
  }

  private constructor(
    private readonly controller: WebviewController<LineageState>,
    private readonly host: VersioningHost,
  ) {
    controller.onDidDispose(() => {
      if (LineagePanel.current === this) LineagePanel.current = undefined;
    });
    controller.serve(LineageMethods, {
      refresh: () => void this.refresh(),
      openVersion: async ({ id }) => {
        const { VersionPanel } = await import('../version/versionPanel');
        await VersionPanel.show(this.host, id, vscode.ViewColumn.Beside);
      },
    });
  }

  private async refresh(): Promise<LineageState> {
    const root = this.host.root();
    let state: LineageState;
    if (!root) state = { ...EMPTY, status: 'empty', error: 'No harness in this workspace: open a folder with an evotrainer.yaml.' };
    else {
      try {
        const model = await loadVersions(root);
        state = model ? layoutLineage(model, root) : { ...EMPTY, status: 'empty', harness: root, error: `${root} is not a git repository yet: create a harness with "EvoTrainer: Initialize Harness…" (or \`evotrainer init\`).` };
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        this.host.output.error(`Lineage graph: ${error}`);
        state = { ...EMPTY, status: 'failed', harness: root, error };
      }
    }
    this.controller.notify(DidChangeLineageNotification, state);
    return state;
  }
}
