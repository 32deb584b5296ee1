import { html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { ExplorerState } from '../../viewer/explorer/protocol';
import { host } from '../shared/app';
import { formatCount } from './text';
import { shown } from '../shared/hidden';
import { ExplorerPart } from './part';

/** The explorer's title line: indexing progress, the store and its size, Refresh, and the store's message. */
@customElement('evo-explorer-status')
export class ExplorerStatusLine extends ExplorerPart {
  @property({ attribute: false }) status!: ExplorerState['status'];
  @property({ attribute: false }) error: string | null = null;
  @property({ attribute: false }) store: string | null = null;
  @property({ attribute: false }) facets: ExplorerState['facets'] = null;
  @property({ attribute: false }) onRefresh: () => void = () => {};

  override render() {
    const { status, error, store, facets } = this;
    return html`
      <header>
        <h1>Failure explorer</h1>
        ${status === 'loading' ? html`<vscode-progress-ring aria-label="Indexing rollouts"></vscode-progress-ring>` : nothing}
        <span class="meta grow" data-testid="explorer-meta">${shown(store)}${facets ? ` · ${formatCount(facets.rollouts)} rollouts` : ''}</span>
        ${host.inEditor ? nothing : html`<a href="curves/" data-testid="explorer-curves-link">Training curves</a>`}
        <vscode-button secondary icon="refresh" @click=${() => this.onRefresh()}>Refresh</vscode-button>
      </header>
      ${error ? html`<p class=${status === 'failed' ? 'error' : 'meta'} data-testid="explorer-message">${shown(error)}</p>` : nothing}
      ${status === 'empty' && !error ? html`<p class="meta" data-testid="explorer-message">No rollouts yet: import some with <code>evotrainer import PATH</code>.</p>` : nothing}
    `;
  }
}
