import type { CurvesState } from '../../viewer/curves/protocol';
import type { WebviewDescriptor } from '../webviews/host';

/**
 * "EvoTrainer: Show Training Curves" (args: {metric, jobId}, both optional). Kept alive
 * while hidden: job logs the editor follows feed it live.
 */
export const curvesWebview: WebviewDescriptor<CurvesState, unknown, CurvesState> = {
  id: 'curves',
  title: () => 'EvoTrainer: Curves',
  retainContextWhenHidden: true,
  load: (s) => s.engine().curvesFeature,
};
