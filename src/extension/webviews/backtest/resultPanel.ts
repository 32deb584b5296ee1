import * as vscode from 'vscode';
import { WebviewController } from '../webviewController';
import { DidChangeResultNotification, ResultMethods, type ResultState } from '../../../viewer/backtest/protocol';

export interface ResultPanelHost {
  context: vscode.ExtensionContext;
  output: vscode.LogOutputChannel;
  /** Acts on a gate result shown in the panel (promote / reject / evidence of its version). */
  gateAction?(version: string, action: 'promote' | 'reject' | 'evidence'): Promise<void>;
}

/**
 * The Backtest Diff webview (and the gate result, and a human gate's evidence): one panel
 * per key ("backtest:v3", "gate:v3", "human:<gate id>"), updated in place on a rerun.
 */
export class ResultPanel {
  private static readonly open = new Map<string, ResultPanel>();
  private state: ResultState;

  static show(host: ResultPanelHost, key: string, state: ResultState, column: vscode.ViewColumn = vscode.ViewColumn.Active, preserveFocus = false): ResultPanel {
    let p = ResultPanel.open.get(key);
    if (!p) {
      const panel = vscode.window.createWebviewPanel('evotrainer.result', state.title, { viewColumn: column, preserveFocus }, { retainContextWhenHidden: true });
      panel.iconPath = vscode.Uri.joinPath(host.context.extensionUri, 'media', 'evotrainer.svg');
      p = new ResultPanel(new WebviewController<ResultState>(panel, host.context.extensionUri, { app: 'backtest', title: state.title, initialState: state, log: host.output }), host, key, state);
      ResultPanel.open.set(key, p);
    } else p.controller.panel.reveal(undefined, preserveFocus);
    p.update(state);
    return p;
  }

  static get(key: string): ResultPanel | undefined {
    return ResultPanel.open.get(key);
  }

  private constructor(
    private readonly controller: WebviewController<ResultState>,
    private readonly host: ResultPanelHost,
    private readonly key: string,
    initial: ResultState,
  ) {
    this.state = initial;
    controller.onDidDispose(() => ResultPanel.open.delete(key));
    controller.serve(ResultMethods, {
      openRollout: async ({ rolloutId }) => {
        await vscode.commands.executeCommand('evotrainer.openFailureExplorer', { rolloutId });
      },
      gateAction: async ({ action }) => {
        const s = this.state;
        if (s.status !== 'done' || s.kind !== 'gate' || !this.host.gateAction) return;
        await this.host.gateAction(s.gate.version, action);
      },
    });
  }

  get current(): ResultState {
    return this.state;
  }

  get disposed(): boolean {
    return !ResultPanel.open.has(this.key);
  }

  update(state: ResultState): void {
    this.state = state;
    this.controller.panel.title = state.title;
    this.controller.notify(DidChangeResultNotification, state);
  }
}
