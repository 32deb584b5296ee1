import { html, type PropertyValues } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { repeat } from 'lit/directives/repeat.js';
import { PAGE_ROWS, type ExplorerColumn, type ExplorerRow, type ExplorerSort } from '../../viewer/explorer/protocol';
import { cellView } from './text';
import { cssProps } from '../shared/style';
import { ExplorerPart } from './part';

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

/**
 * The rollout table, virtualized: only the rows in view (and a few beyond) are in the DOM,
 * over a spacer as tall as every row. The rows come in pages the app holds (`pages`, bumped
 * `pagesVersion` when one arrives); the table asks for the missing ones with `onFetch`.
 * With `baseline` it lays out every row held at once instead (the benchmark's baseline).
 */
@customElement('evo-rollout-table')
export class RolloutTable extends ExplorerPart {
  @property({ attribute: false }) total = 0;
  @property({ attribute: false }) pages: ReadonlyMap<number, ExplorerRow[]> = new Map();
  @property({ attribute: false }) pagesVersion = 0;
  @property({ attribute: false }) sort!: ExplorerSort;
  @property({ attribute: false }) openId: number | null = null;
  @property({ attribute: false }) baseline = false;
  @property({ attribute: false }) onFetch: (page: number) => void = () => {};
  @property({ attribute: false }) onOpen: (id: number) => void = () => {};
  @property({ attribute: false }) onSort: (sort: ExplorerSort) => void = () => {};

  @state() private first = 0;
  @state() private visibleRows = 40;
  @query('.viewport') private viewport?: HTMLElement;
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
    if (changed.has('pagesVersion') && !this.markedFirstRows && this.querySelector('[data-row]')) {
      this.markedFirstRows = true;
      // After the frame that shows the rows has been painted: the benchmark's "first paint".
      requestAnimationFrame(() => setTimeout(() => performance.mark('explorer-first-rows'), 0));
    }
  }

  /** Back to the top (a new query). */
  resetScroll(): void {
    this.first = 0;
    if (this.viewport) this.viewport.scrollTop = 0;
  }

  /** Scrolls `position` into view, a few rows below the top. */
  scrollToRow(position: number): void {
    if (!this.viewport) return;
    this.viewport.scrollTop = Math.max(0, position * ROW_H - ROW_H * 3);
    this.onScroll();
  }

  private measure(): void {
    const h = this.viewport?.clientHeight ?? 0;
    if (h) this.visibleRows = Math.ceil(h / ROW_H) + 1;
  }

  private onScroll = (): void => {
    const top = this.viewport?.scrollTop ?? 0;
    const first = Math.floor(top / ROW_H);
    if (first !== this.first) this.first = first;
  };

  override render() {
    return this.baseline ? this.baselineTable() : this.table();
  }

  private header() {
    const { column, descending } = this.sort;
    return html`<div class="thead cols" role="row">
      ${COLUMNS.map(
        (c) => html`<button class="th ${c.cls} ${c.wide ? 'wide' : ''}" role="columnheader" data-testid="sort-${c.key}" aria-sort=${column === c.key ? (descending ? 'descending' : 'ascending') : 'none'}
          @click=${() => this.onSort({ column: c.key, descending: column === c.key ? !descending : false })}>${c.label}${column === c.key ? (descending ? ' ▾' : ' ▴') : ''}</button>`,
      )}
    </div>`;
  }

  private rowView(r: ExplorerRow | undefined, i: number) {
    if (!r) return html`<div class="row cols placeholder" role="row"><span class="num">${i + 1}</span><span>…</span></div>`;
    return html`<div class="row cols ${this.openId === r.id ? 'open' : ''}" role="row" data-row=${r.id} data-testid="row-${r.id}" tabindex="0"
      @click=${() => this.onOpen(r.id)} @keydown=${(e: KeyboardEvent) => e.key === 'Enter' && this.onOpen(r.id)}>
      ${COLUMNS.map((c) => html`<span class="${c.cls} ${c.wide ? 'wide' : ''} ${c.key === 'correct' ? (r.correct ? 'ok' : r.correct === false ? 'bad' : '') : ''}">${cellView(r, c.key)}</span>`)}
    </div>`;
  }

  private table() {
    const first = Math.max(0, this.first - OVERSCAN);
    const last = Math.min(this.total, this.first + this.visibleRows + OVERSCAN);
    const indices: number[] = [];
    for (let i = first; i < last; i++) {
      indices.push(i);
      if (!this.pages.has(Math.floor(i / PAGE_ROWS))) this.onFetch(Math.floor(i / PAGE_ROWS));
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
      if (i >= 0 && i < this.total && !this.pages.has(page)) this.onFetch(page);
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
}
