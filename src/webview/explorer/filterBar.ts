import { html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { ExplorerFacets, ExplorerFilter, FailureModeBar } from '../../viewer/explorer/protocol';
import { formatCount, modeLabel as label, plainText } from './text';
import { cssProps } from '../shared/style';
import { shown } from '../shared/hidden';
import { ExplorerPart } from './part';

/**
 * The explorer's filters: the failure-mode histogram (a bar selects its mode) and the toolbar
 * (search, mode, run, correctness, step, version) with the count of matching rollouts.
 * It only reports a new filter (`onFilter`); the app queries and hands back the results.
 */
@customElement('evo-explorer-filters')
export class ExplorerFilterBar extends ExplorerPart {
  @property({ attribute: false }) filter: ExplorerFilter = {};
  @property({ attribute: false }) facets: ExplorerFacets | null = null;
  @property({ attribute: false }) histogram: FailureModeBar[] = [];
  @property({ attribute: false }) total = 0;
  @property({ attribute: false }) listError: string | null = null;
  /** The search field's text, ahead of the filter by the typing pause. */
  @property({ attribute: false }) searchDraft = '';
  @property({ attribute: false }) onFilter: (filter: ExplorerFilter) => void = () => {};
  @property({ attribute: false }) onSearchDraft: (draft: string) => void = () => {};

  private searchTimer: ReturnType<typeof setTimeout> | undefined;

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.searchTimer);
  }

  override render() {
    return html`${this.histogramView()}${this.toolbar()}`;
  }

  private histogramView() {
    const bars = this.histogram;
    const max = Math.max(1, ...bars.map((b) => b.count));
    const selected = this.filter.failureMode;
    return html`<div class="hist" data-testid="explorer-histogram" role="list">
      ${bars.map(
        (b) => html`<button
          role="listitem"
          class=${selected === b.mode ? 'selected' : selected ? 'dim' : ''}
          data-testid="bar-${b.mode}"
          title=${b.layer ? `${label(b.mode)}: ${b.count} — suggested layer: ${b.layer}` : `${label(b.mode)}: ${b.count}`}
          aria-pressed=${selected === b.mode ? 'true' : 'false'}
          @click=${() => this.onFilter({ ...this.filter, failureMode: selected === b.mode ? undefined : b.mode })}
        >
          <span class="name">${label(b.mode)}</span>
          <span class="track"><div class="bar ${b.mode === 'success' ? 'success' : ''}" data-count=${b.count} ${cssProps({ width: `${(100 * b.count) / max}%` })}></div></span>
          <span class="meta num">${formatCount(b.count)}</span>
        </button>`,
      )}
    </div>`;
  }

  private toolbar() {
    const f = this.filter;
    const facets = this.facets;
    const set = (patch: Partial<ExplorerFilter>) => {
      const next: ExplorerFilter = { ...f, ...patch };
      for (const k of Object.keys(next) as (keyof ExplorerFilter)[]) if (next[k] === undefined || next[k] === '') delete next[k];
      this.onFilter(next);
    };
    return html`<div class="toolbar">
      <vscode-textfield class="search" placeholder="Search prompts, responses, patches" data-testid="explorer-search" .value=${this.searchDraft}
        @input=${(e: Event) => {
          const draft = (e.target as HTMLInputElement).value;
          this.onSearchDraft(draft);
          clearTimeout(this.searchTimer);
          this.searchTimer = setTimeout(() => set({ search: draft.trim() || undefined }), 300);
        }}></vscode-textfield>
      <vscode-single-select data-testid="explorer-mode" aria-label="Failure mode" .value=${f.failureMode ?? ''} @change=${(e: Event) => set({ failureMode: (e.target as HTMLSelectElement).value || undefined })}>
        <vscode-option value="">all failure modes</vscode-option>
        ${(facets?.failureModes ?? []).map((m) => html`<vscode-option value=${m}>${label(m)}</vscode-option>`)}
      </vscode-single-select>
      <vscode-single-select data-testid="explorer-run" aria-label="Run" .value=${f.run ?? ''} @change=${(e: Event) => set({ run: (e.target as HTMLSelectElement).value || undefined })}>
        <vscode-option value="">all runs</vscode-option>
        ${(facets?.runs ?? []).map((r) => html`<vscode-option value=${r}>${plainText(r)}</vscode-option>`)}
      </vscode-single-select>
      <vscode-single-select data-testid="explorer-correct" aria-label="Correctness" .value=${f.correct ?? ''} @change=${(e: Event) => set({ correct: ((e.target as HTMLSelectElement).value || undefined) as ExplorerFilter['correct'] })}>
        <vscode-option value="">correct or not</vscode-option>
        <vscode-option value="true">correct</vscode-option>
        <vscode-option value="false">incorrect</vscode-option>
        <vscode-option value="unknown">no verdict</vscode-option>
      </vscode-single-select>
      <vscode-textfield class="step" placeholder="step" data-testid="explorer-step" .value=${f.step === undefined ? '' : String(f.step)}
        @change=${(e: Event) => {
          const v = (e.target as HTMLInputElement).value.trim();
          set({ step: /^-?\d+$/.test(v) ? Number(v) : undefined });
        }}></vscode-textfield>
      ${f.version !== undefined
        ? html`<vscode-button secondary icon="close" data-testid="explorer-version" title="Show every version" aria-label=${`Filtered to version ${f.version}: show every version`} @click=${() => set({ version: undefined })}>version ${plainText(f.version)}</vscode-button>`
        : nothing}
      <span class="meta" data-testid="explorer-total">${formatCount(this.total)} ${this.total === 1 ? 'rollout' : 'rollouts'}${Object.keys(f).length ? (this.total === 1 ? ' matches' : ' match') : ''}</span>
      ${this.listError ? html`<span class="error" data-testid="explorer-list-error">${shown(this.listError)}</span>` : nothing}
    </div>`;
  }
}
