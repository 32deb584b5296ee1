import * as vscode from 'vscode';
import { loadHealth } from '../../views/data';
import { openRolloutInExplorer } from '../../explorer/register';
import type { WebviewFeature, WebviewPanelContext, WebviewProvider } from '../host';
import type { WebviewController } from '../webviewController';
import { DidChangeHealthNotification, HealthMethods, type HealthState } from '../../../viewer/health/protocol';

/**
 * "EvoTrainer: Show Health Report": the health report, rule findings and failure modes of
 * the workspace harness's rollout store. The store is opened for each computation and
 * closed right after, so the CLI can import into it meanwhile; shown again after another
 * tab was in front, the report is computed again from the store as it is now.
 */
export const healthFeature: WebviewFeature<HealthState, string | null, HealthState> = {
  stateNotification: DidChangeHealthNotification,
  initialState: (session) => ({ status: 'loading', store: session.storePath(), scope: '', scopes: [], report: null, findings: [], failureModes: [], problems: [], error: null }),
  create: (p) => new HealthPanel(p),
};

class HealthPanel implements WebviewProvider<string | null, HealthState> {
  private findingsVersion: string | null = null;
  /** The scope the user picked in the panel; until then, the one Findings shows. */
  private picked: string | null = null;
  private readonly controller: WebviewController<HealthState>;
  private readonly output: vscode.LogOutputChannel;

  constructor(private readonly p: WebviewPanelContext<HealthState>) {
    this.controller = p.controller;
    this.output = p.session.output;
    this.controller.serve(HealthMethods, {
      refresh: () => void this.recompute(),
      setScope: ({ scope }) => {
        this.picked = scope;
        void this.recompute();
      },
      openRollout: (params) => openRolloutInExplorer(params),
    });
  }

  /** `findingsVersion`: the version the Findings view shows, whose scope the report takes unless the user picked another. */
  show(findingsVersion: string | null): Promise<HealthState> {
    this.findingsVersion = findingsVersion;
    return this.recompute();
  }

  /** Shown again: the report as the store is now, the one shown until then kept meanwhile. */
  onDidShow(): void {
    void this.recompute(true);
  }

  private generation = 0;
  /** Computations run one at a time. */
  private queue: Promise<unknown> = Promise.resolve();

  private recompute(quiet = false): Promise<HealthState> {
    const generation = ++this.generation;
    const next = this.queue.then(() => this.computeState(generation, quiet));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async computeState(generation: number, quiet: boolean): Promise<HealthState> {
    const root = this.p.session.root();
    const base: HealthState = { status: 'loading', store: this.p.session.storePath(), scope: this.picked ?? '', scopes: [], report: null, findings: [], failureModes: [], problems: [], error: null };
    if (!quiet) this.controller.setState(base);
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
    // A later computation (a newer scope, a re-show) has the last word.
    if (generation === this.generation) this.controller.setState(state);
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
