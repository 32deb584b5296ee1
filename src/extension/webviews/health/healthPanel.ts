import * as vscode from 'vscode';
import { FAILURE_MODE_VIEW, SUGGESTED_LAYER, type FailureMode } from '../../../core/diagnose/failureModes';
import { computeHealth, computeSeries, ensureFeatures } from '../../../core/diagnose/health';
import { evaluateRules } from '../../../core/diagnose/rules';
import { findHarnessRoot } from '../../../core/harness/locate';
import { defaultStorePath, RolloutStore } from '../../../core/store/store';
import { WebviewController } from '../webviewController';
import { DidChangeHealthNotification, RefreshHealthCommand, type HealthState } from './protocol';

/** The store of the harness open in the editor (the first workspace folder holding one). */
function workspaceStore(): string | null {
  for (const f of vscode.workspace.workspaceFolders ?? []) {
    const root = findHarnessRoot(f.uri.fsPath);
    if (root) return defaultStorePath(root);
  }
  return null;
}

/**
 * "EvoTrainer: Show Health Report": the health report, rule findings and failure modes of
 * the workspace harness's rollout store. The store is opened for each computation and
 * closed right after, so the CLI can import into it meanwhile.
 */
export class HealthPanel {
  private static current: HealthPanel | undefined;

  static async show(context: vscode.ExtensionContext, output: vscode.LogOutputChannel): Promise<HealthState> {
    if (!HealthPanel.current) {
      const panel = vscode.window.createWebviewPanel('evotrainer.health', 'EvoTrainer: Health', vscode.ViewColumn.Active, {});
      panel.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'evotrainer.svg');
      const initial: HealthState = { status: 'loading', store: workspaceStore(), report: null, findings: [], failureModes: [], error: null };
      HealthPanel.current = new HealthPanel(new WebviewController<HealthState>(panel, context.extensionUri, { app: 'health', title: 'EvoTrainer: Health', initialState: initial, log: output }), output);
    } else {
      HealthPanel.current.controller.panel.reveal();
    }
    return HealthPanel.current.refresh();
  }

  private constructor(
    private readonly controller: WebviewController<HealthState>,
    private readonly output: vscode.LogOutputChannel,
  ) {
    controller.onDidDispose(() => {
      if (HealthPanel.current === this) HealthPanel.current = undefined;
    });
    controller.onCommand(RefreshHealthCommand, null, () => void this.refresh());
  }

  private async refresh(): Promise<HealthState> {
    const storePath = workspaceStore();
    const base: HealthState = { status: 'loading', store: storePath, report: null, findings: [], failureModes: [], error: null };
    this.controller.notify(DidChangeHealthNotification, base);
    let state: HealthState;
    if (!storePath) {
      state = { ...base, status: 'empty', error: 'No harness in this workspace: open a folder with an evotrainer.yaml.' };
    } else {
      try {
        state = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'EvoTrainer: computing the health report' }, () => this.compute(storePath, base));
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        this.output.error(`Health report failed: ${error}`);
        state = { ...base, status: 'failed', error };
      }
    }
    this.controller.notify(DidChangeHealthNotification, state);
    return state;
  }

  private async compute(storePath: string, base: HealthState): Promise<HealthState> {
    const store = await RolloutStore.open(storePath);
    try {
      const report = await computeHealth(store);
      if (!report.rollouts && !report.curvePoints) return { ...base, status: 'empty', report, error: null };
      const findings = evaluateRules({ health: report, series: await computeSeries(store) });
      await ensureFeatures(store);
      await store.conn.run(FAILURE_MODE_VIEW);
      const modes = await store.all<{ failure_mode: FailureMode; n: number; examples: number[] }>(
        `select failure_mode, count(*) as n, list(id order by id)[1:5] as examples from rollout_failure_modes group by 1 order by n desc`,
      );
      const failureModes = modes.map((m) => ({ mode: m.failure_mode, count: m.n, examples: m.examples.map(Number), layer: SUGGESTED_LAYER[m.failure_mode] }));
      this.output.info(`Health report: ${report.rollouts} rollouts, ${report.alerts.length} alert(s), ${findings.length} finding(s)`);
      return { ...base, status: 'done', report, findings, failureModes };
    } finally {
      store.close();
    }
  }
}
