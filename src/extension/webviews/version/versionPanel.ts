import * as vscode from 'vscode';
import { loadEntry } from '../../views/data';
import type { BacktestReport } from '../../../core/backtest/backtest';
import { resultWebview } from '../../backtest/webviews';
import { backtestView } from '../backtest/view';
import type { WebviewFeature, WebviewPanelContext, WebviewProvider } from '../host';
import { evidenceState } from './evidence';
import { DidChangeVersionNotification, VersionMethods, type VersionEvidenceState } from '../../../viewer/version/protocol';

const loading = (id: string): VersionEvidenceState => ({
  status: 'loading', id, parent: null, branch: '', commit: '', state: '', isPromoted: false, layer: '', hypothesis: null, intervention: null,
  primaryMetric: null, metrics: [], backtest: null, gate: null, rejectReason: null, skill: null, transitions: [], error: null,
});

/** A version's evidence (hypothesis, criterion, backtest, gate), opened beside its diff. One panel per version: its key is the version's id. */
export const versionFeature: WebviewFeature<VersionEvidenceState, void, VersionEvidenceState> = {
  stateNotification: DidChangeVersionNotification,
  initialState: (_session, id) => loading(id),
  create: (p) => new VersionPanel(p),
};

class VersionPanel implements WebviewProvider<void, VersionEvidenceState> {
  private readonly id: string;

  constructor(private readonly p: WebviewPanelContext<VersionEvidenceState>) {
    this.id = p.key;
    p.controller.serve(VersionMethods, {
      openFileDiff: async ({ file }) => {
        const state = await this.refresh();
        if (!state.parent || !state.intervention?.changedPaths.includes(file)) return;
        const { openFileDiff } = await import('../../commands/versions');
        await openFileDiff(state.parent, this.id, file);
      },
      runAction: async ({ action }) => {
        if (action === 'showBacktest') return this.showRecordedBacktest();
        const cmd = { promote: 'evotrainer.promoteVersion', reject: 'evotrainer.rejectVersion', recordSkill: 'evotrainer.recordSkill', backtest: 'evotrainer.backtestVersion', gate: 'evotrainer.gateVersion' }[action];
        await vscode.commands.executeCommand(cmd, this.id);
        await this.refresh();
      },
    });
  }

  show(): Promise<VersionEvidenceState> {
    return this.refresh();
  }

  /** Shown again: the evidence as the ledger holds it now. */
  onDidShow(): void {
    void this.refresh();
  }

  /** Reopens the Backtest Diff from the report recorded in the ledger (its first 20 flipped tasks). */
  private async showRecordedBacktest(): Promise<void> {
    const { session } = this.p;
    const root = session.root();
    if (!root) return;
    const { entry } = await loadEntry(root, this.id);
    const data = [...entry.transitions].reverse().flatMap((t) => t.evidence).find((e) => e.kind === 'backtest' && e.data)?.data as BacktestReport | undefined;
    const key = `backtest:${this.id}`;
    const title = `Backtest: ${this.id}${data?.against ? ` vs ${data.against}` : ''} (recorded)`;
    try {
      if (!data) throw new Error(`no backtest report is recorded on ${this.id}`);
      await session.webviews.show(resultWebview, { status: 'done', kind: 'backtest', title, backtest: backtestView(data) }, { key, column: vscode.ViewColumn.Beside });
    } catch (err) {
      await session.webviews.show(resultWebview, { status: 'failed', kind: 'backtest', title, error: `the recorded report cannot be shown: ${err instanceof Error ? err.message : String(err)}` }, { key, column: vscode.ViewColumn.Beside });
    }
  }

  async refresh(): Promise<VersionEvidenceState> {
    const { session, controller } = this.p;
    const root = session.root();
    let state: VersionEvidenceState;
    try {
      if (!root) throw new Error('no harness in this workspace');
      const { entry, parent, promoted } = await loadEntry(root, this.id);
      state = evidenceState(entry, parent, promoted);
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      session.output.error(`Evidence of ${this.id}: ${error}`);
      state = { ...loading(this.id), status: 'failed', error };
    }
    controller.setState(state);
    return state;
  }
}
