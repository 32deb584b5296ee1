import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import { css, html, nothing, type PropertyValues } from 'lit';
import { customElement, query, state } from 'lit/decorators.js';
import { guard } from 'lit/directives/guard.js';
import { repeat } from 'lit/directives/repeat.js';
import {
  ExplorerStateNotification,
  MoreTextRequest,
  OpenTrajectoryRequest,
  PAGE_ROWS,
  QueryRequest,
  RefreshExplorerRequest,
  type ExplorerColumn,
  type ExplorerFilter,
  type ExplorerRow,
  type ExplorerSort,
  type ExplorerState,
  type TextChunk,
  type TextPart,
  type Trajectory,
  type TrajectoryMessage,
} from '../../viewer/explorer/protocol';
import { ansiSegments, cellText, diffLines, formatChars, formatCount, modeLabel as label, plainText, type Segment } from './text';
import './tokenStrip';
import { cssProps } from '../shared/style';
import { AppElement, appStyles, host } from '../shared/app';

const ROW_H = 24;
const OVERSCAN = 10;

/** The table's columns; `wide` ones are hidden while a trajectory takes half the width. */
const COLUMNS: { key: ExplorerColumn; label: string; cls: string; wide?: boolean }[] = [
  { key: 'id', label: 'id', cls: 'num' },
  { key: 'run_id', label: 'run', cls: '', wide: true },
  { key: 'step', label: 'step', cls: 'num', wide: true },
  { key: 'failure_mode', label: 'failure mode', cls: '' },
  { key: 'correct', label: 'correct', cls: '' },
  { key: 'reward', label: 'reward', cls: 'num', wide: true },
  { key: 'num_turns', label: 'turns', cls: 'num' },
  { key: 'response_tokens', label: 'tokens', cls: 'num', wide: true },
  { key: 'prompt_id', label: 'task', cls: '' },
];

function partKey(p: TextPart): string {
  return p.kind === 'message' ? `message:${p.index}` : p.kind;
}

@customElement('evo-explorer-app')
export class ExplorerApp extends AppElement<ExplorerState> {
  protected readonly stateNotification = ExplorerStateNotification;

  static override styles = [
    appStyles,
    css`
    :host { display: flex; flex-direction: column; height: 100vh; box-sizing: border-box; padding: 10px 16px 0; color: var(--vscode-foreground); font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); }
    header { display: flex; align-items: center; gap: 12px; }
    h1 { font-size: 1.3em; font-weight: 600; margin: 0; }
    h2 { font-size: 1.05em; margin: 0; }
    .meta { color: var(--vscode-descriptionForeground); font-size: 0.9em; }
    .grow { flex: 1; }
    .error { color: var(--vscode-errorForeground); }
    .hist { display: flex; flex-direction: column; gap: 2px; margin: 8px 0; max-width: 900px; }
    .hist button { all: unset; cursor: pointer; display: grid; grid-template-columns: 170px 1fr 70px; gap: 10px; align-items: center; }
    .hist .name { padding: 1px 4px; border-radius: 2px; }
    .hist .track { height: 12px; }
    .hist .bar { height: 12px; border-radius: 2px; background: var(--vscode-charts-blue, var(--vscode-focusBorder)); min-width: 2px; }
    .hist .bar.success { background: var(--vscode-charts-green, var(--vscode-testing-iconPassed)); }
    .hist .selected .name { background: var(--vscode-list-activeSelectionBackground); color: var(--vscode-list-activeSelectionForeground); }
    .hist .dim { opacity: 0.45; }
    .hist button:focus-visible .name { outline: 1px solid var(--vscode-focusBorder); }
    .toolbar { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 4px 0 8px; }
    .toolbar vscode-textfield.search { width: 260px; }
    .toolbar vscode-textfield.step { width: 80px; }
    .toolbar vscode-single-select { width: 180px; }
    .main { flex: 1; display: flex; gap: 12px; min-height: 0; padding-bottom: 8px; }
    .table { flex: 1 1 45%; display: flex; flex-direction: column; min-width: 0; overflow: hidden; border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, transparent)); }
    .cols { display: grid; grid-template-columns: 64px 90px 52px 140px 72px 64px 64px 64px minmax(120px, 1fr); }
    .compact .cols { grid-template-columns: 56px 130px 72px 64px minmax(80px, 1fr); }
    .table.compact .wide, .table.compact .thead .th.wide { display: none; }
    /* A narrow editor column: the compact columns, so that none is cut off. */
    @media (max-width: 720px) {
      .cols { grid-template-columns: 56px 130px 72px 64px minmax(80px, 1fr); }
      .table .wide, .table .thead .th.wide { display: none; }
      .hist button { grid-template-columns: minmax(90px, 150px) 1fr 56px; }
    }
    .thead { font-weight: 600; border-bottom: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, transparent)); background: var(--vscode-editorWidget-background); }
    .thead .th { all: unset; cursor: pointer; padding: 3px 6px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
    .thead .th:focus-visible { outline: 1px solid var(--vscode-focusBorder); }
    .viewport { flex: 1; overflow-y: auto; overflow-x: hidden; position: relative; min-height: 120px; contain: strict; }
    .spacer { width: 1px; }
    .rows { position: absolute; left: 0; right: 0; top: 0; will-change: transform; }
    .row { height: 24px; line-height: 24px; cursor: pointer; contain: strict; }
    .row > span { padding: 0 6px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
    .row:hover { background: var(--vscode-list-hoverBackground); }
    .row:focus-visible { outline: 1px solid var(--vscode-list-focusOutline, var(--vscode-focusBorder)); outline-offset: -1px; }
    .row.open { background: var(--vscode-list-activeSelectionBackground); color: var(--vscode-list-activeSelectionForeground); }
    .row.placeholder { color: var(--vscode-descriptionForeground); }
    .num { text-align: right; font-variant-numeric: tabular-nums; }
    .ok { color: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); }
    .bad { color: var(--vscode-errorForeground); }
    .baseline { overflow: auto; flex: 1; }
    .traj { flex: 1 1 55%; overflow: auto; min-width: 0; border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, transparent)); padding: 8px 10px; }
    .traj header { margin-bottom: 6px; }
    .facts { display: flex; flex-wrap: wrap; gap: 4px 14px; margin-bottom: 8px; }
    .msg { border-left: 3px solid var(--vscode-panel-border, var(--vscode-widget-border, transparent)); margin: 8px 0; padding: 2px 0 2px 8px; }
    .msg.assistant { border-left-color: var(--vscode-charts-blue, var(--vscode-focusBorder)); }
    .msg.failed { border-left-color: var(--vscode-errorForeground); }
    .msg-head { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; font-size: 0.9em; color: var(--vscode-descriptionForeground); }
    .role { font-weight: 600; color: var(--vscode-foreground); }
    .flag { color: var(--vscode-editorWarning-foreground); }
    pre { margin: 4px 0; white-space: pre-wrap; overflow-wrap: anywhere; word-break: break-word; font-family: var(--vscode-editor-font-family, monospace); font-size: var(--vscode-editor-font-size, 12px); }
    pre.cmd { background: var(--vscode-textCodeBlock-background, var(--vscode-editorWidget-background)); padding: 4px 6px; border-radius: 2px; }
    pre.text { max-height: 480px; overflow: auto; }
    .rc { font-variant-numeric: tabular-nums; }
    .diff { margin-top: 12px; }
    .diff pre { white-space: pre; overflow-x: auto; max-height: none; }
    .dl { display: block; min-height: 1.2em; }
    .dl.add { color: var(--vscode-gitDecoration-addedResourceForeground, var(--vscode-charts-green)); background: var(--vscode-diffEditor-insertedLineBackground, var(--vscode-diffEditor-insertedTextBackground)); }
    .dl.del { color: var(--vscode-gitDecoration-deletedResourceForeground, var(--vscode-errorForeground)); background: var(--vscode-diffEditor-removedLineBackground, var(--vscode-diffEditor-removedTextBackground)); }
    .dl.hunk { color: var(--vscode-charts-purple, var(--vscode-textLink-foreground)); }
    .dl.meta { color: var(--vscode-descriptionForeground); font-weight: 600; }
    .ctrl { color: var(--vscode-descriptionForeground); font-style: italic; }
    /* "Show more (10.4 M characters left of …)" wraps in a narrow pane rather than overflow it. */
    vscode-button.more { max-width: 100%; }
    vscode-button.more::part(base) { white-space: normal; height: auto; }
    .ansi-bold { font-weight: 700; } .ansi-dim { opacity: 0.7; } .ansi-italic { font-style: italic; } .ansi-underline { text-decoration: underline; }
    .ansi-fg-0 { color: var(--vscode-terminal-ansiBlack); } .ansi-fg-1 { color: var(--vscode-terminal-ansiRed); } .ansi-fg-2 { color: var(--vscode-terminal-ansiGreen); } .ansi-fg-3 { color: var(--vscode-terminal-ansiYellow); }
    .ansi-fg-4 { color: var(--vscode-terminal-ansiBlue); } .ansi-fg-5 { color: var(--vscode-terminal-ansiMagenta); } .ansi-fg-6 { color: var(--vscode-terminal-ansiCyan); } .ansi-fg-7 { color: var(--vscode-terminal-ansiWhite); }
    .ansi-fg-8 { color: var(--vscode-terminal-ansiBrightBlack); } .ansi-fg-9 { color: var(--vscode-terminal-ansiBrightRed); } .ansi-fg-10 { color: var(--vscode-terminal-ansiBrightGreen); } .ansi-fg-11 { color: var(--vscode-terminal-ansiBrightYellow); }
    .ansi-fg-12 { color: var(--vscode-terminal-ansiBrightBlue); } .ansi-fg-13 { color: var(--vscode-terminal-ansiBrightMagenta); } .ansi-fg-14 { color: var(--vscode-terminal-ansiBrightCyan); } .ansi-fg-15 { color: var(--vscode-terminal-ansiBrightWhite); }
    .ansi-bg-0 { background: var(--vscode-terminal-ansiBlack); } .ansi-bg-1 { background: var(--vscode-terminal-ansiRed); } .ansi-bg-2 { background: var(--vscode-terminal-ansiGreen); } .ansi-bg-3 { background: var(--vscode-terminal-ansiYellow); }
    .ansi-bg-4 { background: var(--vscode-terminal-ansiBlue); } .ansi-bg-5 { background: var(--vscode-terminal-ansiMagenta); } .ansi-bg-6 { background: var(--vscode-terminal-ansiCyan); } .ansi-bg-7 { background: var(--vscode-terminal-ansiWhite); }
    .ansi-bg-8, .ansi-bg-9, .ansi-bg-10, .ansi-bg-11, .ansi-bg-12, .ansi-bg-13, .ansi-bg-14, .ansi-bg-15 { background: var(--vscode-terminal-ansiBrightBlack); }
    `,
  ];

  @state() private total = 0;
  @state() private first = 0;
  @state() private visibleRows = 40;
  @state() private pagesVersion = 0;
  @state() private trajectory: Trajectory | null = null;
  @state() private trajectoryError: string | null = null;
  @state() private openId: number | null = null;
  @state() private listError: string | null = null;
  @state() private searchDraft = '';
  /** Bumped when a "show more" page arrives (the trajectory view re-renders only then). */
  @state() private grownVersion = 0;

  @query('.viewport') private viewport?: HTMLElement;

  private generation = 0;
  private readonly pages = new Map<number, ExplorerRow[]>();
  /** Pages asked for and not yet answered: page → the generation that asked. */
  private readonly inflight = new Map<number, number>();
  /** Texts grown by "show more": key `${id}|${part}`. */
  private readonly grown = new Map<string, TextChunk>();
  private readonly segmentCache = new Map<string, { end: number; segments: Segment[] }>();
  private searchTimer: ReturnType<typeof setTimeout> | undefined;
  private pendingScrollTo: number | null = null;
  private resizeObserver: ResizeObserver | undefined;
  private markedFirstRows = false;

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.resizeObserver?.disconnect();
  }

  protected override firstUpdated(): void {
    this.resizeObserver = new ResizeObserver(() => this.measure());
    if (this.viewport) this.resizeObserver.observe(this.viewport);
    this.measure();
  }

  protected override updated(changed: PropertyValues): void {
    if (this.pendingScrollTo !== null && this.viewport) {
      this.viewport.scrollTop = Math.max(0, this.pendingScrollTo * ROW_H - ROW_H * 3);
      this.pendingScrollTo = null;
      this.onScroll();
    }
    if (changed.has('pagesVersion') || changed.has('view')) {
      if (!this.markedFirstRows && this.renderRoot.querySelector('[data-row]')) {
        this.markedFirstRows = true;
        // After the frame that shows the rows has been painted: the benchmark's "first paint".
        requestAnimationFrame(() => setTimeout(() => performance.mark('explorer-first-rows'), 0));
      }
    }
  }

  private measure(): void {
    const h = this.viewport?.clientHeight ?? 0;
    if (h) this.visibleRows = Math.ceil(h / ROW_H) + 1;
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
      this.open(s.openRolloutId);
      if (s.openRolloutPosition !== null) this.pendingScrollTo = s.openRolloutPosition;
    }
  }

  private resetPages(): void {
    this.generation++;
    this.pages.clear();
    this.inflight.clear();
    this.total = 0;
    this.first = 0;
    if (this.viewport) this.viewport.scrollTop = 0;
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

  private onScroll = (): void => {
    const top = this.viewport?.scrollTop ?? 0;
    const first = Math.floor(top / ROW_H);
    if (first !== this.first) this.first = first;
  };

  private open(id: number): void {
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

  private baseChunk(part: TextPart): TextChunk | null {
    const t = this.trajectory;
    if (!t) return null;
    if (part.kind === 'message') return t.messages[part.index]?.content ?? null;
    return t[part.kind];
  }

  private textOf(part: TextPart): TextChunk | null {
    if (!this.trajectory) return null;
    return this.grown.get(`${this.trajectory.id}|${partKey(part)}`) ?? this.baseChunk(part);
  }

  private segments(key: string, c: TextChunk): Segment[] {
    const hit = this.segmentCache.get(key);
    if (hit && hit.end === c.end) return hit.segments;
    const segments = ansiSegments(c.text);
    this.segmentCache.set(key, { end: c.end, segments });
    return segments;
  }

  private more(part: TextPart): void {
    const c = this.textOf(part);
    if (!c || !this.trajectory) return;
    const id = this.trajectory.id;
    host.request(MoreTextRequest, { id, part, offset: c.end }).then(
      (chunk) => {
        if (id !== this.trajectory?.id) return;
        const key = `${id}|${partKey(part)}`;
        const prev = this.grown.get(key) ?? this.baseChunk(part);
        if (!prev || prev.end !== chunk.end - chunk.text.length) return;
        this.grown.set(key, { text: prev.text + chunk.text, length: chunk.length, end: chunk.end });
        this.grownVersion++;
      },
      (err: Error) => console.error(`more text of rollout ${id}: ${err.message}`),
    );
  }

  override render() {
    const { status, error, store, facets } = this.view;
    return html`
      <header>
        <h1>Failure explorer</h1>
        ${status === 'loading' ? html`<vscode-progress-ring aria-label="Indexing rollouts"></vscode-progress-ring>` : nothing}
        <span class="meta grow" data-testid="explorer-meta">${store ?? ''}${facets ? ` · ${formatCount(facets.rollouts)} rollouts` : ''}</span>
        <vscode-button secondary icon="refresh" @click=${() => this.refresh()}>Refresh</vscode-button>
      </header>
      ${error ? html`<p class=${status === 'failed' ? 'error' : 'meta'} data-testid="explorer-message">${error}</p>` : nothing}
      ${status === 'empty' && !error ? html`<p class="meta" data-testid="explorer-message">No rollouts yet: import some with <code>evotrainer import PATH</code>.</p>` : nothing}
      ${status === 'ready' ? this.body() : nothing}
    `;
  }

  private body() {
    return html`
      ${guard([this.view.histogram, this.view.filter], () => this.histogram())}
      ${guard([this.view.filter, this.view.facets, this.total, this.listError, this.searchDraft], () => this.toolbar())}
      <div class="main">
        ${this.view.baselineRows ? this.baselineTable() : this.table()}
        ${this.openId !== null ? guard([this.openId, this.trajectory, this.trajectoryError, this.grownVersion], () => this.trajectoryView()) : nothing}
      </div>
    `;
  }

  private histogram() {
    const bars = this.view.histogram;
    const max = Math.max(1, ...bars.map((b) => b.count));
    const selected = this.view.filter.failureMode;
    return html`<div class="hist" data-testid="explorer-histogram" role="list">
      ${bars.map(
        (b) => html`<button
          role="listitem"
          class=${selected === b.mode ? 'selected' : selected ? 'dim' : ''}
          data-testid="bar-${b.mode}"
          title=${b.layer ? `${label(b.mode)}: ${b.count} — suggested layer: ${b.layer}` : `${label(b.mode)}: ${b.count}`}
          aria-pressed=${selected === b.mode ? 'true' : 'false'}
          @click=${() => this.setQuery({ ...this.view.filter, failureMode: selected === b.mode ? undefined : b.mode })}
        >
          <span class="name">${label(b.mode)}</span>
          <span class="track"><div class="bar ${b.mode === 'success' ? 'success' : ''}" data-count=${b.count} ${cssProps({ width: `${(100 * b.count) / max}%` })}></div></span>
          <span class="meta num">${formatCount(b.count)}</span>
        </button>`,
      )}
    </div>`;
  }

  private toolbar() {
    const f = this.view.filter;
    const facets = this.view.facets;
    const set = (patch: Partial<ExplorerFilter>) => {
      const next: ExplorerFilter = { ...f, ...patch };
      for (const k of Object.keys(next) as (keyof ExplorerFilter)[]) if (next[k] === undefined || next[k] === '') delete next[k];
      this.setQuery(next);
    };
    return html`<div class="toolbar">
      <vscode-textfield class="search" placeholder="Search prompts, responses, patches" data-testid="explorer-search" .value=${this.searchDraft}
        @input=${(e: Event) => {
          this.searchDraft = (e.target as HTMLInputElement).value;
          clearTimeout(this.searchTimer);
          this.searchTimer = setTimeout(() => set({ search: this.searchDraft.trim() || undefined }), 300);
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
      ${this.listError ? html`<span class="error" data-testid="explorer-list-error">${this.listError}</span>` : nothing}
    </div>`;
  }

  private header() {
    const { column, descending } = this.view.sort;
    return html`<div class="thead cols" role="row">
      ${COLUMNS.map(
        (c) => html`<button class="th ${c.cls} ${c.wide ? 'wide' : ''}" role="columnheader" data-testid="sort-${c.key}" aria-sort=${column === c.key ? (descending ? 'descending' : 'ascending') : 'none'}
          @click=${() => this.setQuery(this.view.filter, { column: c.key, descending: column === c.key ? !descending : false })}>${c.label}${column === c.key ? (descending ? ' ▾' : ' ▴') : ''}</button>`,
      )}
    </div>`;
  }

  private rowView(r: ExplorerRow | undefined, i: number) {
    if (!r) return html`<div class="row cols placeholder" role="row"><span class="num">${i + 1}</span><span>…</span></div>`;
    return html`<div class="row cols ${this.openId === r.id ? 'open' : ''}" role="row" data-row=${r.id} data-testid="row-${r.id}" tabindex="0"
      @click=${() => this.open(r.id)} @keydown=${(e: KeyboardEvent) => e.key === 'Enter' && this.open(r.id)}>
      ${COLUMNS.map((c) => html`<span class="${c.cls} ${c.wide ? 'wide' : ''} ${c.key === 'correct' ? (r.correct ? 'ok' : r.correct === false ? 'bad' : '') : ''}">${cellText(r, c.key)}</span>`)}
    </div>`;
  }

  private table() {
    const first = Math.max(0, this.first - OVERSCAN);
    const last = Math.min(this.total, this.first + this.visibleRows + OVERSCAN);
    const indices: number[] = [];
    for (let i = first; i < last; i++) {
      indices.push(i);
      if (!this.pages.has(Math.floor(i / PAGE_ROWS))) this.fetchPage(Math.floor(i / PAGE_ROWS));
    }
    // Keyed by position in the table: rows that stay on screen keep their DOM (only new ones are laid out).
    const rows = repeat(
      indices,
      (i) => i,
      (i) => this.rowView(this.pages.get(Math.floor(i / PAGE_ROWS))?.[i % PAGE_ROWS], i),
    );
    // The pages just beyond the visible rows, ahead of a scroll in either direction.
    for (const i of [first - PAGE_ROWS / 2, last + PAGE_ROWS / 2]) {
      const page = Math.floor(i / PAGE_ROWS);
      if (i >= 0 && i < this.total && !this.pages.has(page)) this.fetchPage(page);
    }
    return html`<div class="table ${this.openId !== null ? 'compact' : ''}" role="table" aria-rowcount=${this.total}>
      ${this.header()}
      <div class="viewport" data-testid="explorer-viewport" @scroll=${this.onScroll}>
        <div class="spacer" ${cssProps({ height: `${this.total * ROW_H}px` })}></div>
        <div class="rows" ${cssProps({ transform: `translateY(${first * ROW_H}px)` })}>${rows}</div>
      </div>
    </div>`;
  }

  /** Every row in the DOM at once: the benchmark's baseline, never used otherwise. */
  private baselineTable() {
    const rows = [...this.pages.entries()].sort((a, b) => a[0] - b[0]).flatMap(([, rs]) => rs);
    return html`<div class="table ${this.openId !== null ? 'compact' : ''}" role="table">${this.header()}<div class="baseline viewport" data-testid="explorer-viewport">${rows.map((r, i) => this.rowView(r, i))}</div></div>`;
  }

  private trajectoryView() {
    const t = this.trajectory;
    if (!t) {
      return html`<div class="traj" data-testid="trajectory">${this.trajectoryError ? html`<p class="error">${this.trajectoryError}</p>` : html`<vscode-progress-ring aria-label="Loading the trajectory"></vscode-progress-ring>`}</div>`;
    }
    return html`<div class="traj" data-testid="trajectory" data-rollout=${t.id}>
      <header>
        <h2>Rollout ${t.id} · ${plainText(t.prompt_id)}</h2>
        <span class="grow"></span>
        <vscode-button secondary icon="close" data-testid="trajectory-close" @click=${() => {
          this.openId = null;
          this.trajectory = null;
        }}>Close</vscode-button>
      </header>
      <div class="facts meta">
        <span>run ${plainText(t.run_id)}${t.version ? ` · version ${plainText(t.version)}` : ''} · step ${t.step} · ${t.split}</span>
        <span data-testid="trajectory-mode">failure mode: <b>${label(t.failure_mode)}</b></span>
        <span>reward ${t.reward ?? '—'}</span>
        <span class=${t.correct ? 'ok' : t.correct === false ? 'bad' : ''}>${t.correct === null ? 'no verdict' : t.correct ? 'correct' : 'incorrect'}</span>
        <span>${t.num_turns ?? '—'} turns</span>
        <span>stop: ${t.stop_reason ?? '—'}</span>
        <span>source ${t.raw_ref}</span>
      </div>
      ${t.messages.map((m) => this.messageView(t, m))}
      ${t.tokens.some((k) => k.messageIndex === null)
        ? html`<div class="msg" data-testid="tokens-unplaced"><div class="msg-head"><span class="role">Tokens of model calls with no message shown</span></div>
            ${t.tokens.filter((k) => k.messageIndex === null).map((k) => html`<div class="meta">call ${k.turn + 1}</div><evo-token-strip .strip=${k}></evo-token-strip>`)}</div>`
        : nothing}
      ${t.answer ? this.textBlock('answer', { kind: 'answer' }, 'Answer') : nothing}
      ${t.groundTruth ? this.textBlock('ground-truth', { kind: 'groundTruth' }, 'Ground truth') : nothing}
      ${t.diff ? this.diffView() : nothing}
    </div>`;
  }

  private messageView(t: Trajectory, m: TrajectoryMessage) {
    const failed = m.exitCode !== null && m.exitCode !== 0;
    const flags = [m.formatError && 'format error', m.timeout && 'timeout', m.truncated && 'output truncated'].filter(Boolean);
    return html`<div class="msg ${m.role === 'assistant' ? 'assistant' : ''} ${failed || m.formatError || m.timeout ? 'failed' : ''}" data-testid="msg-${m.index}">
      <div class="msg-head">
        <span class="role">${m.role}</span><span>#${m.index}</span>${m.part === 'prompt' ? html`<span>prompt</span>` : nothing}
        ${m.actionKind && m.actionKind !== 'message' && m.actionKind !== 'observation' ? html`<span>${m.actionKind}</span>` : nothing}
        ${m.exitCode !== null ? html`<span class="rc ${failed ? 'bad' : 'ok'}" data-testid="rc-${m.index}">exit ${m.exitCode}</span>` : nothing}
        ${flags.map((f) => html`<span class="flag">${f}</span>`)}
      </div>
      ${m.command ? html`<pre class="cmd" data-testid="cmd-${m.index}">$ ${m.command}</pre>` : nothing}
      ${this.textBody(`${t.id}|message:${m.index}`, { kind: 'message', index: m.index }, `text-${m.index}`)}
      ${t.tokens.filter((k) => k.messageIndex === m.index).map((k) => html`<evo-token-strip .strip=${k}></evo-token-strip>`)}
    </div>`;
  }

  private textBody(key: string, part: TextPart, testid: string) {
    const c = this.textOf(part);
    if (!c) return nothing;
    const left = c.length - c.end;
    return html`<pre class="text" data-testid=${testid}>${this.segments(key, c).map((s) => (s.classes ? html`<span class=${s.classes}>${s.text}</span>` : s.text))}</pre>
      ${left > 0 ? html`<vscode-button secondary class="more" data-testid="more-${testid}" @click=${() => this.more(part)}>Show more (${formatChars(left)} left of ${formatChars(c.length)})</vscode-button>` : nothing}`;
  }

  private textBlock(testid: string, part: TextPart, title: string) {
    return html`<div class="msg" data-testid=${testid}><div class="msg-head"><span class="role">${title}</span></div>${this.textBody(`${this.trajectory!.id}|${partKey(part)}`, part, `text-${testid}`)}</div>`;
  }

  private diffView() {
    const c = this.textOf({ kind: 'diff' })!;
    const left = c.length - c.end;
    return html`<div class="diff" data-testid="diff">
      <h2>Submitted diff</h2>
      <pre>${diffLines(c.text).map((l) => html`<span class="dl ${l.kind}">${l.text || ' '}</span>`)}</pre>
      ${left > 0 ? html`<vscode-button secondary class="more" data-testid="more-diff" @click=${() => this.more({ kind: 'diff' })}>Show more (${formatChars(left)} left)</vscode-button>` : nothing}
    </div>`;
  }
}
