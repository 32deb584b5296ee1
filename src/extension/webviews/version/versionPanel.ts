import * as vscode from 'vscode';
import type { VersioningHost } from '../../commands/versions';
import { loadEntry } from '../../views/data';
import type { BacktestReport } from '../../../core/backtest/backtest';
import { ResultPanel } from '../backtest/resultPanel';
import { backtestView } from '../backtest/view';
import { WebviewController } from '../webviewController';
import { evidenceState } from './evidence';
import { DidChangeVersionNotification, VersionMethods, type VersionEvidenceState } from '../../../viewer/version/protocol';

const loading = (id: string): VersionEvidenceState => ({
  status: 'loading', id, parent: null, branch: '', commit: '', state: '', isPromoted: false, layer: '', hypothesis: null, intervention: null,
  primaryMetric: null, metrics: [], backtest: null, gate: null, rejectReason: null, skill: null, transitions: [], error: null,
});

/** A version's evidence (hypothesis, criterion, backtest, gate), opened beside its diff. One panel per version. */
export class VersionPanel {
  private static readonly open = new Map<string, VersionPanel>();

  static async show(host: VersioningHost, id: string, column: vscode.ViewColumn = vscode.ViewColumn.Active): Promise<VersionEvidenceState> {
    let p = VersionPanel.open.get(id);
    if (!p) {
      const panel = vscode.window.createWebviewPanel('evotrainer.version', `Evidence: ${id}`, { viewColumn: column, preserveFocus: true }, {});
      panel.iconPath = vscode.Uri.joinPath(host.context.extensionUri, 'media', 'evotrainer.svg');
      p = new VersionPanel(new WebviewController<VersionEvidenceState>(panel, host.context.extensionUri, { app: 'version', title: `Evidence: ${id}`, initialState: loading(id), log: host.output }), host, id);
      VersionPanel.open.set(id, p);
    } else p.controller.panel.reveal(undefined, true);
    return p.refresh();
  }

  static refreshAll(): void {
    for (const p of VersionPanel.open.values()) void p.refresh();
  }

  private constructor(
    private readonly controller: WebviewController<VersionEvidenceState>,
    private readonly host: VersioningHost,
    private readonly id: string,
  ) {
    controller.onDidDispose(() => VersionPanel.open.delete(id));
    controller.serve(VersionMethods, {
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

  /** Reopens the Backtest Diff from the report recorded in the ledger (its first 20 flipped tasks). */
  private async showRecordedBacktest(): Promise<void> {
    const root = this.host.root();
    if (!root) return;
    const { entry } = await loadEntry(root, this.id);
    const data = [...entry.transitions].reverse().flatMap((t) => t.evidence).find((e) => e.kind === 'backtest' && e.data)?.data as BacktestReport | undefined;
    const key = `backtest:${this.id}`;
    const title = `Backtest: ${this.id}${data?.against ? ` vs ${data.against}` : ''} (recorded)`;
    try {
      if (!data) throw new Error(`no backtest report is recorded on ${this.id}`);
      ResultPanel.show({ context: this.host.context, output: this.host.output }, key, { status: 'done', kind: 'backtest', title, backtest: backtestView(data) }, vscode.ViewColumn.Beside);
    } catch (err) {
      ResultPanel.show({ context: this.host.context, output: this.host.output }, key, { status: 'failed', kind: 'backtest', title, error: `the recorded report cannot be shown: ${err instanceof Error ? err.message : String(err)}` }, vscode.ViewColumn.Beside);
    }
  }

  private async refresh(): Promise<VersionEvidenceState> {
    const root = this.host.root();
    let state: VersionEvidenceState;
    try {
      if (!root) throw new Error('no harness in this workspace');
      const { entry, parent, promoted } = await loadEntry(root, this.id);
      state = evidenceState(entry, parent, promoted);
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      this.host.output.error(`Evidence of ${this.id}: ${error}`);
      state = { ...loading(this.id), status: 'failed', error };
    }
    this.controller.notify(DidChangeVersionNotification, state);
    return state;
  }
}
