import type { ViewerPage } from '../http';
import type { IpcMessage } from '../protocol';
import { errorText, HostTransport, type ViewerLog } from '../transport';
import { emptyCurvesState, loadCurves } from './backend';
import { CurvesMethods, CurvesStateNotification, type CurvesState, type VersionMark } from './protocol';

export interface CurvesPageOptions {
  storeFile: string;
  /** The ledger's versions (see versionMarks); none without a harness. */
  versions: () => Promise<VersionMark[]>;
  log?: ViewerLog;
}

/**
 * The training curves page of `evotrainer view` (at `curves/`): the editor's curves page
 * over the same store reads, with no job logs to follow. A browser hears from the host only
 * in answers, so a new metric or a refresh comes back as the state notification in the
 * answer to the command; a step opens the explorer page beside it (see the page's openStep).
 * `?metric=NAME` opens the chart on that metric.
 */
export function curvesPage(opts: CurvesPageOptions): ViewerPage {
  let metric: string | null = null;
  const outbox: IpcMessage[] = [];
  const load = async (): Promise<CurvesState> => {
    try {
      const state = await loadCurves(opts.storeFile, metric, await opts.versions(), []);
      metric = state.metric ?? metric;
      return state;
    } catch (err) {
      opts.log?.('error', `[curves] ${errorText(err)}`);
      return emptyCurvesState(opts.storeFile, 'failed', errorText(err));
    }
  };
  const push = async () => {
    outbox.push({ method: CurvesStateNotification.method, params: await load() });
  };
  return {
    app: 'curves',
    title: 'EvoTrainer: Curves',
    transport: new HostTransport('curves', opts.log).serve(CurvesMethods, {
      refresh: push,
      setMetric: (p) => {
        metric = p.metric;
        return push();
      },
      // The page opens the explorer itself in a browser; nothing to do here.
      openStep: () => undefined,
    }),
    initialState: (query) => {
      const want = query.get('metric');
      if (want) metric = want.slice(0, 500);
      return load();
    },
    drain: () => outbox.splice(0),
  };
}
