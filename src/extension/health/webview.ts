import type { HealthState } from '../../viewer/health/protocol';
import type { WebviewDescriptor } from '../webviews/host';

/** "EvoTrainer: Show Health Report"; shown with the version the Findings view shows. */
export const healthWebview: WebviewDescriptor<HealthState, string | null, HealthState> = {
  id: 'health',
  title: () => 'EvoTrainer: Health',
  load: (s) => s.engine().healthFeature,
};
