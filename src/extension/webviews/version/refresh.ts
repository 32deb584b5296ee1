import { LineagePanel } from '../lineage/lineagePanel';
import { VersionPanel } from './versionPanel';

/** After a decision or a new version: redraw the open lineage graph and evidence panels. */
export function refreshVersionPanels(): void {
  LineagePanel.refreshIfOpen();
  VersionPanel.refreshAll();
}
