import * as vscode from 'vscode';
import { readLedger } from '../../../core/harness/ledger';
import { openHarness } from '../../../core/harness/repo';
import { storeStamp } from '../../../core/store/stamp';
import type { WebviewFeature, WebviewPanelContext, WebviewProvider } from '../host';
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

/**
 * "EvoTrainer: Show Training Curves" (args optional: {metric, jobId}): one metric over
 * steps for every run and version in the store, overlaid with steps aligned, each
 * version's curve marked with its standing in the ledger; a step opens the failure
 * explorer on the rollouts dumped at it. Job logs the editor follows feed it live. Shown
 * again after an import while it was hidden, it reads the store again (the same metric).
 */
export const curvesFeature: WebviewFeature<CurvesState, unknown, CurvesState> = {
  stateNotification: CurvesStateNotification,
  initialState: (session) => ({ ...emptyCurvesState(session.storePath()), live: liveCurves.all() }),
  create: (p) => new CurvesPanel(p),
};

class CurvesPanel implements WebviewProvider<unknown, CurvesState> {
  private metric: string | null = null;
  /** The store's write stamp after the last read (see storeStamp). */
  private stamp: string | null | undefined;
  private readonly output: vscode.LogOutputChannel;

  constructor(private readonly p: WebviewPanelContext<CurvesState>) {
    const { controller } = p;
    this.output = p.session.output;
    const live = liveCurves.onDidChange((s) => {
      controller.notify(LiveCurvesNotification, s);
      // Nothing charted yet (no curves in the store): the first live points choose the metric.
      if (this.metric === null && !this.refreshing) void this.reload();
    });
    controller.onDidDispose(() => live.dispose());
    controller.serve(CurvesMethods, {
      refresh: () => void this.reload(),
      setMetric: ({ metric }) => {
        this.metric = metric;
        void this.reload();
      },
      openStep: async ({ run, version, step }) => {
        await vscode.commands.executeCommand('evotrainer.openFailureExplorer', { run, ...(version ? { version } : {}), step });
      },
    });
  }

  show(rawArgs?: unknown): Promise<CurvesState> {
    let args: OpenCurvesArgs = {};
    if (rawArgs !== undefined && rawArgs !== null) {
      const parsed = OpenCurvesArgsSchema.safeParse(rawArgs);
      if (parsed.success) args = parsed.data;
      else this.output.warn(`Show Training Curves: ignored its arguments (${parsed.error.message.replace(/\s+/g, ' ').slice(0, 200)}); expected {metric?, jobId?}.`);
    }
    if (args.metric) this.metric = args.metric;
    return this.reload();
  }

  /** Shown again: read the store again if something wrote it meanwhile (an import). */
  onDidShow(): void {
    const storePath = this.p.session.storePath();
    if (storePath && !this.refreshing && storeStamp(storePath) !== this.stamp) void this.reload();
  }

  private refreshing = false;

  private async reload(): Promise<CurvesState> {
    this.refreshing = true;
    try {
      return await this.reloadNow();
    } finally {
      this.refreshing = false;
    }
  }

  private async reloadNow(): Promise<CurvesState> {
    const { session } = this.p;
    const root = session.root();
    let state: CurvesState;
    if (!root) state = emptyCurvesState(null, 'empty', 'No harness in this workspace: open a folder with an evotrainer.yaml.');
    else {
      const storePath = session.storePath()!;
      try {
        const versions = await this.versions(root);
        state = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'EvoTrainer: reading training curves' }, () => loadCurves(storePath, this.metric, versions, liveCurves.all()));
        this.stamp = storeStamp(storePath);
        this.metric = state.metric;
        this.output.info(`Training curves: ${state.metric ?? 'none'} over ${state.series.length} run(s)${state.live.length ? `, ${state.live.length} live job log(s)` : ''}`);
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        this.output.error(`Training curves: ${error}`);
        state = emptyCurvesState(storePath, 'failed', error);
      }
    }
    this.p.controller.setState(state);
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
