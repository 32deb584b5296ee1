import * as vscode from 'vscode';
import { markHidden } from '../../../core/util/hidden';
import { openRolloutInExplorer } from '../../explorer/register';
import type { WebviewFeature, WebviewPanelContext, WebviewProvider } from '../host';
import { DidChangeResultNotification, ResultMethods, type ResultState } from '../../../viewer/backtest/protocol';

/** An open Backtest Diff / gate / human-gate panel: its commands update it as their work goes. */
export interface ResultPanel {
  readonly current: ResultState;
  readonly disposed: boolean;
  update(state: ResultState): void;
}

/**
 * The Backtest Diff webview (and the gate result, and a human gate's evidence): one panel
 * per key ("backtest:v3", "gate:v3", "human:<gate id>"), updated in place on a rerun.
 * Shown with a state, it shows that state and hands back the panel to update.
 */
export const resultFeature: WebviewFeature<ResultState, ResultState, ResultPanel> = {
  stateNotification: DidChangeResultNotification,
  initialState: () => ({ status: 'loading', kind: 'backtest', title: '', progress: 'starting' }),
  create: (p) => new ResultPanelProvider(p),
};

class ResultPanelProvider implements WebviewProvider<ResultState, ResultPanel>, ResultPanel {
  disposed = false;

  constructor(private readonly p: WebviewPanelContext<ResultState>) {
    p.controller.onDidDispose(() => (this.disposed = true));
    p.controller.serve(ResultMethods, {
      openRollout: (params) => openRolloutInExplorer(params),
      gateAction: async ({ action }) => {
        const s = this.current;
        if (s.status !== 'done' || s.kind !== 'gate') return;
        const version = s.gate.version;
        if (action === 'evidence') {
          await vscode.commands.executeCommand('evotrainer.showVersionEvidence', version);
          return;
        }
        const { promoteFromGate, rejectFromGate } = await import('../../backtest/commands');
        await (action === 'promote' ? promoteFromGate : rejectFromGate)(p.session, version);
      },
    });
  }

  show(state: ResultState): ResultPanel {
    this.update(state);
    return this;
  }

  get current(): ResultState {
    return this.p.controller.state;
  }

  update(state: ResultState): void {
    if (this.disposed) return;
    this.p.controller.panel.title = markHidden(state.title);
    this.p.controller.setState(state);
  }
}
