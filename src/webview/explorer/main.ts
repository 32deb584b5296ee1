import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import { html, nothing } from 'lit';
import { customElement, query, state } from 'lit/decorators.js';
import {
  ExplorerStateNotification,
  OpenTrajectoryRequest,
  PAGE_ROWS,
  QueryRequest,
  RefreshExplorerRequest,
  type ExplorerFilter,
  type ExplorerRow,
  type ExplorerSort,
  type ExplorerState,
  type Trajectory,
} from '../../viewer/explorer/protocol';
import { AppElement, appStyles, host } from '../shared/app';
import { explorerStyles } from './styles';
import './statusLine';
import './filterBar';
import './rolloutTable';
import type { RolloutTable } from './rolloutTable';
import { GrownTexts } from './trajectoryView';

/**
 * The failure explorer's page: it holds the query (filter, sort), the pages of rows fetched
 * for it and the open trajectory, and lays out its parts: the status line
 * (`evo-explorer-status`), the filter bar (`evo-explorer-filters`), the virtualized rollout
 * table (`evo-rollout-table`) and the trajectory (`evo-trajectory-view`).
 */
@customElement('evo-explorer-app')
export class ExplorerApp extends AppElement<ExplorerState> {
  protected readonly stateNotification = ExplorerStateNotification;

  static override styles = [appStyles, explorerStyles];

  @state() private total = 0;
  @state() private pagesVersion = 0;
  @state() private trajectory: Trajectory | null = null;
  @state() private trajectoryError: string | null = null;
  @state() private openId: number | null = null;
  /** The open trajectory's agent turn to show (opened from a gate's answer-in-context row), or null. */
  @state() private openTurn: number | null = null;
  @state() private listError: string | null = null;
  @state() private searchDraft = '';

  @query('evo-rollout-table') private table?: RolloutTable;

  private generation = 0;
  private readonly pages = new Map<number, ExplorerRow[]>();
  /** Pages asked for and not yet answered: page → the generation that asked. */
  private readonly inflight = new Map<number, number>();
  private readonly texts = new GrownTexts();
  private pendingScrollTo: number | null = null;

  protected override updated(): void {
    if (this.pendingScrollTo !== null && this.table) {
      const position = this.pendingScrollTo;
      this.pendingScrollTo = null;
      const table = this.table;
      void table.updateComplete.then(() => table.scrollToRow(position));
    }
  }

  /** A whole new state from the host (opened, re-opened with a filter, refreshed). */
  protected override adopt(s: ExplorerState): void {
    this.view = s;
    this.searchDraft = s.filter.search ?? '';
    this.resetPages();
    if (s.page) {
      this.total = s.page.total;
      this.pages.set(0, s.page.rows.slice(0, PAGE_ROWS));
      for (let p = 1; p * PAGE_ROWS < s.page.rows.length; p++) this.pages.set(p, s.page.rows.slice(p * PAGE_ROWS, (p + 1) * PAGE_ROWS));
    }
    this.pagesVersion++;
    if (s.openRolloutId !== null) {
      this.open(s.openRolloutId, s.openRolloutTurn);
      if (s.openRolloutPosition !== null) this.pendingScrollTo = s.openRolloutPosition;
    }
  }

  private resetPages(): void {
    this.generation++;
    this.pages.clear();
    this.inflight.clear();
    this.total = 0;
    this.table?.resetScroll();
  }

  private setQuery(filter: ExplorerFilter, sort: ExplorerSort = this.view.sort): void {
    this.view = { ...this.view, filter, sort };
    this.resetPages();
    this.fetchPage(0, true);
  }

  private fetchPage(page: number, withHistogram = false): void {
    const generation = this.generation;
    if (this.inflight.get(page) === generation) return;
    this.inflight.set(page, generation);
    host.request(QueryRequest, { filter: this.view.filter, sort: this.view.sort, offset: page * PAGE_ROWS, limit: PAGE_ROWS, withHistogram }).then(
      (r) => {
        if (generation !== this.generation) return;
        this.inflight.delete(page);
        this.listError = null;
        this.total = r.page.total;
        this.pages.set(page, r.page.rows);
        if (r.histogram) this.view = { ...this.view, histogram: r.histogram };
        this.pagesVersion++;
      },
      (err: Error) => {
        if (generation !== this.generation) return;
        this.inflight.delete(page);
        this.listError = err.message;
      },
    );
  }

  private refresh(): void {
    host.request(RefreshExplorerRequest, undefined).then(
      (s) => this.adopt(s),
      (err: Error) => (this.listError = err.message),
    );
  }

  private open(id: number, turn: number | null = null): void {
    this.openTurn = turn;
    if (this.openId === id && this.trajectory) return;
    this.openId = id;
    this.trajectory = null;
    this.trajectoryError = null;
    host.request(OpenTrajectoryRequest, { id }).then(
      (trajectory) => {
        if (id === this.openId) this.trajectory = trajectory;
      },
      (err: Error) => {
        if (id === this.openId) this.trajectoryError = err.message;
      },
    );
  }

  // Handlers handed to the parts: created once, so that they never re-render a part by themselves.
  private readonly onRefresh = () => this.refresh();
  private readonly onFilter = (filter: ExplorerFilter) => this.setQuery(filter);
  private readonly onSearchDraft = (draft: string) => (this.searchDraft = draft);
  private readonly onSort = (sort: ExplorerSort) => this.setQuery(this.view.filter, sort);
  private readonly onFetch = (page: number) => this.fetchPage(page);
  private readonly onOpen = (id: number) => this.open(id);
  private readonly onClose = () => {
    this.openId = null;
    this.openTurn = null;
    this.trajectory = null;
  };

  override render() {
    const { status, error, store, facets } = this.view;
    return html`
      <evo-explorer-status .status=${status} .error=${error} .store=${store} .facets=${facets} .onRefresh=${this.onRefresh}></evo-explorer-status>
      ${status === 'ready' ? this.body() : nothing}
    `;
  }

  private body() {
    const v = this.view;
    return html`
      <evo-explorer-filters .filter=${v.filter} .facets=${v.facets} .histogram=${v.histogram} .total=${this.total} .listError=${this.listError}
        .searchDraft=${this.searchDraft} .onFilter=${this.onFilter} .onSearchDraft=${this.onSearchDraft}></evo-explorer-filters>
      <div class="main">
        <evo-rollout-table .total=${this.total} .pages=${this.pages} .pagesVersion=${this.pagesVersion} .sort=${v.sort} .openId=${this.openId}
          .baseline=${Boolean(v.baselineRows)} .onFetch=${this.onFetch} .onOpen=${this.onOpen} .onSort=${this.onSort}></evo-rollout-table>
        ${this.openId !== null
          ? html`<evo-trajectory-view .trajectory=${this.trajectory} .turn=${this.openTurn} .error=${this.trajectoryError} .texts=${this.texts} .onClose=${this.onClose}></evo-trajectory-view>`
          : nothing}
      </div>
    `;
  }
}
