import type { ResultPanel } from '../webviews/backtest/resultPanel';
import type { ResultState } from '../../viewer/backtest/protocol';
import type { WebviewDescriptor } from '../webviews/host';

/** The Backtest Diff, a gate's decision, a human gate's evidence: one panel per key ("backtest:v3", "gate:v3", "human:<id>"), shown with its state. */
export const resultWebview: WebviewDescriptor<ResultState, ResultState, ResultPanel> = {
  id: 'backtest',
  title: (key) => `EvoTrainer: ${key}`,
  retainContextWhenHidden: true,
  load: (s) => s.engine().resultFeature,
};
