import * as vscode from 'vscode';
import { findHarnessRoot } from '../../../core/harness/locate';
import { defaultStorePath } from '../../../core/store/store';
import { loadHealth } from '../../views/data';
import { WebviewController } from '../webviewController';
import { DidChangeHealthNotification, HealthMethods, type HealthState } from '../../../viewer/health/protocol';

/** The harness open in the editor (the first workspace folder holding one). */
function workspaceHarness(): string | null {
  for (const f of vscode.workspace.workspaceFolders ?? []) {
    const root = findHarnessRoot(f.uri.fsPath);
    if (root) return root;
  }
  return null;
}

const storeOf = (root: string | null) => (root ? defaultStorePath(root) : null);

/**
 * "EvoTrainer: Show Health Report": the health report, rule findings and failure modes of
 * the workspace harness's rollout store. The store is opened for each computation and
 * closed right after, so the CLI can import into it meanwhile.
 */
export class HealthPanel {
  private static current: HealthPanel | undefined;

  /** `version`: the version the Findings view shows, whose scope the report takes unless the user picked another. */
  static async show(context: vscode.ExtensionContext, output: vscode.LogOutputChannel, findingsVersion: string | null = null): Promise<HealthState> {
    if (!HealthPanel.current) {
      const panel = vscode.window.createWebviewPanel('evotrainer.health', 'EvoTrainer: Health', vscode.ViewColumn.Active, {});
      panel.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'evotrainer.svg');
      const initial: HealthState = { status: 'loading', store: storeOf(workspaceHarness()), scope: '', scopes: [], report: null, findings: [], failureModes: [], problems: [], error: null };
      HealthPanel.current = new HealthPanel(new WebviewController<HealthState>(panel, context.extensionUri, { app: 'health', title: 'EvoTrainer: Health', initialState: initial, log: output }), output);
    } else {
      HealthPanel.current.controller.panel.reveal();
    }
    HealthPanel.current.findingsVersion = findingsVersion;
    return HealthPanel.current.refresh();
  }

  private findingsVersion: string | null = null;
  /** The scope the user picked in the panel; until then, the one Findings shows. */
  private picked: string | null = null;

  private constructor(
    private readonly controller: WebviewController<HealthState>,
    private readonly output: vscode.LogOutputChannel,
  ) {
    controller.onDidDispose(() => {
      if (HealthPanel.current === this) HealthPanel.current = undefined;
    });
    controller.serve(HealthMethods, {
      refresh: () => void this.refresh(),
      setScope: ({ scope }) => {
        this.picked = scope;
        void this.refresh();
      },
    });
  }

  private async refresh(): Promise<HealthState> {
    const root = workspaceHarness();
    const base: HealthState = { status: 'loading', store: storeOf(root), scope: this.picked ?? '', scopes: [], report: null, findings: [], failureModes: [], problems: [], error: null };
    this.controller.notify(DidChangeHealthNotification, base);
    let state: HealthState;
    if (!root) {
      state = { ...base, status: 'empty', error: 'No harness in this workspace: open a folder with an evotrainer.yaml.' };
    } else {
      try {
        state = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'EvoTrainer: computing the health report' }, () => this.compute(root));
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        this.output.error(`Health report failed: ${error}`);
        state = { ...base, status: 'failed', error };
      }
    }
    this.controller.notify(DidChangeHealthNotification, state);
    return state;
  }

  /** The harness's metrics, rules and thresholds apply, as on the command line; its script metrics run only in a trusted workspace. */
  private async compute(root: string): Promise<HealthState> {
    const state = await loadHealth(root, { picked: this.picked, findingsVersion: this.findingsVersion, trust: vscode.workspace.isTrusted });
    const label = state.scopes.find((o) => o.key === state.scope)?.label ?? state.scope;
    this.output.info(`Health report of ${label}: ${state.report?.alerts.length ?? 0} alert(s), ${state.findings.length} finding(s)${state.problems.length ? `, ${state.problems.length} harness diagnostic problem(s)` : ''}`);
    return state;
  }
}
