import type { ExplorerState } from '../../viewer/explorer/protocol';
import type { WebviewDescriptor } from '../webviews/host';

/**
 * "EvoTrainer: Open Failure Explorer" (args: {failureMode, run, version, rolloutId}, all
 * optional). Kept alive while hidden: the table's pages, its scroll position and the
 * open trajectory survive a tab switch.
 */
export const explorerWebview: WebviewDescriptor<ExplorerState, unknown, ExplorerState> = {
  id: 'explorer',
  title: () => 'EvoTrainer: Failures',
  retainContextWhenHidden: true,
  load: (s) => s.engine().explorerFeature,
};
