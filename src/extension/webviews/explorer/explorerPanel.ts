import * as vscode from 'vscode';
import { storeStamp } from '../../../core/store/stamp';
import { RolloutStore } from '../../../core/store/store';
import type { WebviewFeature, WebviewPanelContext, WebviewProvider } from '../host';
import { ExplorerBackend } from '../../../viewer/explorer/backend';
import { ExplorerMethods, ExplorerStateNotification, OpenExplorerArgsSchema, type ExplorerState, type OpenExplorerArgs } from '../../../viewer/explorer/protocol';

/** The store is closed after this long without a request, so the CLI can import meanwhile. */
const IDLE_CLOSE_MS = 60_000;

const emptyState = (store: string | null): ExplorerState => ({ status: 'loading', store, error: null, facets: null, filter: {}, sort: { column: 'id', descending: false }, page: null, histogram: [], openRolloutId: null, openRolloutPosition: null, openRolloutTurn: null });

/**
 * "EvoTrainer: Open Failure Explorer" (args optional: {failureMode, run, version,
 * rolloutId, turn}): the failure-mode histogram, the rollouts table and the trajectory viewer
 * over the workspace harness's rollout store. Its document is kept while hidden (the
 * table's pages, its scroll position, the open trajectory) and the store is closed
 * meanwhile, so the CLI can import; shown again after a change of the store, it shows the
 * store as it is now under the same filter and sort. Refresh re-reads the store.
 */
export const explorerFeature: WebviewFeature<ExplorerState, unknown, ExplorerState> = {
  stateNotification: ExplorerStateNotification,
  initialState: (session) => emptyState(session.storePath()),
  create: (p) => new ExplorerPanel(p),
};

class ExplorerPanel implements WebviewProvider<unknown, ExplorerState> {
  private readonly backend: ExplorerBackend | null;

  constructor(private readonly p: WebviewPanelContext<ExplorerState>) {
    const { session, controller } = p;
    const storePath = session.storePath();
    this.backend = storePath
      ? new ExplorerBackend({
          open: () => RolloutStore.open(storePath),
          storeLabel: storePath,
          idleCloseMs: IDLE_CLOSE_MS,
          stamp: () => storeStamp(storePath),
          log: (level, m) => session.output[level](m),
        })
      : null;
    controller.onDidDispose(() => void this.backend?.dispose());
    if (this.backend) controller.serve(ExplorerMethods, this.backend.methods);
  }

  onDidHide(): void {
    void this.backend?.release();
  }

  /** Shown again: the store as it is now, if something wrote it while the panel was hidden. */
  onDidShow(): void {
    const backend = this.backend;
    if (!backend) return;
    void backend.refreshIfChanged().then((state) => {
      if (!state) return;
      this.p.session.output.info(`Failure explorer: the store changed while hidden; ${state.facets?.rollouts ?? 0} rollouts now`);
      this.p.controller.setState(state);
    });
  }

  async show(rawArgs?: unknown): Promise<ExplorerState> {
    const { session, controller } = this.p;
    let args: OpenExplorerArgs = {};
    if (rawArgs !== undefined && rawArgs !== null) {
      const parsed = OpenExplorerArgsSchema.safeParse(rawArgs);
      if (!parsed.success) {
        const msg = `Open Failure Explorer: ignored its arguments (${parsed.error.message.replace(/\s+/g, ' ').slice(0, 200)}); expected {failureMode?, run?, version?, step?, rolloutId?, turn?}.`;
        session.output.warn(msg);
        void vscode.window.showWarningMessage(msg);
      } else {
        args = parsed.data;
      }
    }
    let state: ExplorerState;
    if (!this.backend) {
      state = { ...emptyState(null), status: 'empty', error: 'No harness in this workspace: open a folder with an evotrainer.yaml.' };
    } else {
      const backend = this.backend;
      state = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'EvoTrainer: indexing rollouts for the failure explorer' }, () => backend.state(args));
      if (state.status === 'failed') session.output.error(`Failure explorer: ${state.error}`);
      else session.output.info(`Failure explorer: ${state.facets?.rollouts ?? 0} rollouts${args.failureMode ? `, filtered to ${args.failureMode}` : ''}${args.step !== undefined ? `, step ${args.step}` : ''}`);
    }
    controller.setState(state);
    return { ...state, page: state.page ? { ...state.page, rows: [] } : null };
  }
}
