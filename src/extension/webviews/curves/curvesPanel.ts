import * as vscode from 'vscode';
import { readLedger } from '../../../core/harness/ledger';
import { findHarnessRoot } from '../../../core/harness/locate';
import { openHarness } from '../../../core/harness/repo';
import { defaultStorePath } from '../../../core/store/store';
import { WebviewController } from '../webviewController';
import { emptyCurvesState, loadCurves, versionMarks } from '../../../viewer/curves/backend';
import { liveCurves } from '../../../viewer/curves/live';
import {
  CurvesMethods,
  CurvesStateNotification,
  LiveCurvesNotification,
  OpenCurvesArgsSchema,
  type CurvesState,
  type OpenCurvesArgs,
  type VersionMark,
} from '../../../viewer/curves/protocol';

/** The harness open in the editor (the first workspace folder holding one). */
function workspaceHarness(): string | null {
  for (const f of vscode.workspace.workspaceFolders ?? []) {
    const root = findHarnessRoot(f.uri.fsPath);
    if (root) return root;
  }
  return null;
}

/**
 * "EvoTrainer: Show Training Curves" (args optional: {metric, jobId}): one metric over
 * steps for every run and version in the store, overlaid with steps aligned, each
 * version's curve marked with its standing in the ledger; a step opens the failure
 * explorer on the rollouts dumped at it. Job logs the editor follows feed it live.
 */
export class CurvesPanel {
  private static current: CurvesPanel | undefined;

  static async show(context: vscode.ExtensionContext, output: vscode.LogOutputChannel, rawArgs?: unknown): Promise<CurvesState> {
    let args: OpenCurvesArgs = {};
    if (rawArgs !== undefined && rawArgs !== null) {
      const parsed = OpenCurvesArgsSchema.safeParse(rawArgs);
      if (parsed.success) args = parsed.data;
      else output.warn(`Show Training Curves: ignored its arguments (${parsed.error.message.replace(/\s+/g, ' ').slice(0, 200)}); expected {metric?, jobId?}.`);
    }
    if (!CurvesPanel.current) {
      const panel = vscode.window.createWebviewPanel('evotrainer.curves', 'EvoTrainer: Curves', vscode.ViewColumn.Active, { retainContextWhenHidden: true });
      panel.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'evotrainer.svg');
      const root = workspaceHarness();
      const initial = { ...emptyCurvesState(root ? defaultStorePath(root) : null), live: liveCurves.all() };
      CurvesPanel.current = new CurvesPanel(new WebviewController<CurvesState>(panel, context.extensionUri, { app: 'curves', title: 'EvoTrainer: Curves', initialState: initial, log: output }), output);
    } else {
      CurvesPanel.current.controller.panel.reveal();
    }
    if (args.metric) CurvesPanel.current.metric = args.metric;
    return CurvesPanel.current.refresh();
  }

  private metric: string | null = null;

  private constructor(
    private readonly controller: WebviewController<CurvesState>,
    private readonly output: vscode.LogOutputChannel,
  ) {
    const live = liveCurves.onDidChange((s) => {
      controller.notify(LiveCurvesNotification, s);
      // Nothing charted yet (no curves in the store): the first live points choose the metric.
      if (this.metric === null && !this.refreshing) void this.refresh();
    });
    controller.onDidDispose(() => {
      live.dispose();
      if (CurvesPanel.current === this) CurvesPanel.current = undefined;
    });
    controller.serve(CurvesMethods, {
      refresh: () => void this.refresh(),
      setMetric: ({ metric }) => {
        this.metric = metric;
        void this.refresh();
      },
      openStep: async ({ run, version, step }) => {
        await vscode.commands.executeCommand('evotrainer.openFailureExplorer', { run, ...(version ? { version } : {}), step });
      },
    });
  }

  private refreshing = false;

  private async refresh(): Promise<CurvesState> {
    this.refreshing = true;
    try {
      return await this.refreshNow();
    } finally {
      this.refreshing = false;
    }
  }

  private async refreshNow(): Promise<CurvesState> {
    const root = workspaceHarness();
    let state: CurvesState;
    if (!root) state = emptyCurvesState(null, 'empty', 'No harness in this workspace: open a folder with an evotrainer.yaml.');
    else {
      const storePath = defaultStorePath(root);
      try {
        const versions = await this.versions(root);
        state = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'EvoTrainer: reading training curves' }, () => loadCurves(storePath, this.metric, versions, liveCurves.all()));
        this.metric = state.metric;
        this.output.info(`Training curves: ${state.metric ?? 'none'} over ${state.series.length} run(s)${state.live.length ? `, ${state.live.length} live job log(s)` : ''}`);
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        this.output.error(`Training curves: ${error}`);
        state = emptyCurvesState(storePath, 'failed', error);
      }
    }
    this.controller.notify(CurvesStateNotification, state);
    return state;
  }

  /** The ledger's versions; a harness without one (not yet a git repository) marks none. */
  private async versions(root: string): Promise<VersionMark[]> {
    try {
      return versionMarks(await readLedger(await openHarness(root)));
    } catch (err) {
      this.output.warn(`Training curves: no version marks (${err instanceof Error ? err.message : String(err)})`);
      return [];
    }
  }
}
