import { LitElement } from 'lit';

/**
 * A part of the explorer's page (status line, filter bar, rollout table, trajectory): it
 * renders into the app's shadow root rather than a shadow root of its own, so the app's one
 * stylesheet styles it and the page's elements stay reachable from the app's shadow root.
 */
export abstract class ExplorerPart extends LitElement {
  protected override createRenderRoot(): HTMLElement {
    return this;
  }
}
