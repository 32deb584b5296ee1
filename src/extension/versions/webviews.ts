import type { LineageState } from '../../viewer/lineage/protocol';
import type { VersionEvidenceState } from '../../viewer/version/protocol';
import type { WebviewDescriptor } from '../webviews/host';

/** "EvoTrainer: Open Lineage Graph": the version tree. */
export const lineageWebview: WebviewDescriptor<LineageState, void, LineageState> = {
  id: 'lineage',
  title: () => 'EvoTrainer: Lineage',
  load: (s) => s.engine().lineageFeature,
};

/** A version's evidence beside its diff: one panel per version (the key is its id). */
export const versionWebview: WebviewDescriptor<VersionEvidenceState, void, VersionEvidenceState> = {
  id: 'version',
  title: (id) => `Evidence: ${id}`,
  load: (s) => s.engine().versionFeature,
};
