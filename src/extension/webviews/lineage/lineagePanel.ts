import * as vscode from 'vscode';
import { loadVersions } from '../../views/data';
import { versionWebview } from '../../versions/webviews';
import type { WebviewFeature, WebviewPanelContext, WebviewProvider } from '../host';
import { layoutLineage } from './layout';
import { DidChangeLineageNotification, LineageMethods, type LineageState } from '../../../viewer/lineage/protocol';

const EMPTY: LineageState = { status: 'loading', harness: null, metric: null, promoted: null, nodes: [], edges: [], width: 0, height: 0, error: null };

/** "EvoTrainer: Open Lineage Graph": the version tree with scores, the promoted path, rejected branches. */
export const lineageFeature: WebviewFeature<LineageState, void, LineageState> = {
  stateNotification: DidChangeLineageNotification,
  initialState: (session) => ({ ...EMPTY, harness: session.root() }),
  create: (p) => new LineagePanel(p),
};

class LineagePanel implements WebviewProvider<void, LineageState> {
  constructor(private readonly p: WebviewPanelContext<LineageState>) {
    p.controller.serve(LineageMethods, {
      refresh: () => void this.refresh(),
      openVersion: async ({ id }) => {
        await p.session.webviews.show(versionWebview, undefined, { key: id, column: vscode.ViewColumn.Beside, preserveFocus: true });
      },
    });
  }

  show(): Promise<LineageState> {
    return this.refresh();
  }

  /** Shown again: the graph as the ledger is now (a decision taken meanwhile, in the CLI too). */
  onDidShow(): void {
    void this.refresh();
  }

  async refresh(): Promise<LineageState> {
    const { session, controller } = this.p;
    const root = session.root();
    let state: LineageState;
    if (!root) state = { ...EMPTY, status: 'empty', error: 'No harness in this workspace: open a folder with an evotrainer.yaml.' };
    else {
      try {
        const model = await loadVersions(root);
        state = model ? layoutLineage(model, root) : { ...EMPTY, status: 'empty', harness: root, error: `${root} is not a git repository yet: create a harness with "EvoTrainer: Initialize Harness…" (or \`evotrainer init\`).` };
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        session.output.error(`Lineage graph: ${error}`);
        state = { ...EMPTY, status: 'failed', harness: root, error };
      }
    }
    controller.setState(state);
    return state;
  }
}
