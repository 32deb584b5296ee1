import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import { css, html, nothing, svg } from 'lit';
import { customElement, query, state } from 'lit/decorators.js';
import {
  CurvesStateNotification,
  LiveCurvesNotification,
  OpenStepCommand,
  RefreshCurvesCommand,
  SetCurveMetricCommand,
  type CurvesState,
  type LiveSeries,
  type VersionMark,
} from '../../viewer/curves/protocol';
import { AppElement, appStyles, host } from '../shared/app';
import { markHidden, shown } from '../shared/hidden';
import { formatValue, linePath, nearestDumpedStep, nearestIndex, niceTicks, valueExtent, type ChartPoint } from './chart';

/** Series colours: the theme's chart colours, in this order (then again, dashed). */
const COLOURS = 6;
const HEIGHT = 320;
const MARGIN = { left: 58, right: 18, top: 14, bottom: 34 };

interface Shown {
  key: string;
  label: string;
  run: string;
  version: string | null;
  /** The name this series logged the metric under. */
  metric: string;
  points: ChartPoint[];
  live: LiveSeries | null;
  mark: VersionMark | null;
  colour: number;
}

/** Rollout text never reaches this page, but run and version names are the user's: shown as text only. */
/** A series' name as text (run and version names are untrusted: hidden characters as their marks). */
const seriesLabel = (run: string, version: string | null) => markHidden(`${run}${version ? `@${version}` : ''}`);

@customElement('evo-curves-app')
export class CurvesApp extends AppElement<CurvesState> {
  protected readonly stateNotification = CurvesStateNotification;

  static override styles = [
    appStyles,
    css`
    :host { padding: 12px 20px; --evo-orange: var(--vscode-charts-orange); }
    /* The charts' orange of a dark theme (#d18616 in Dark Modern) reads brown on its dark background: a brighter, redder orange there. */
    :host-context(body.vscode-dark) { --evo-orange: color-mix(in srgb, var(--vscode-charts-orange) 30%, #ffa657); }
    @media (prefers-color-scheme: dark) { :host-context(body:not([class])) { --evo-orange: color-mix(in srgb, var(--vscode-charts-orange) 30%, #ffa657); } }
    header { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 12px; margin-bottom: 8px; }
    h1 { font-size: 1.3em; font-weight: 600; margin: 0; }
    .grow { flex: 1; }
    .meta { color: var(--vscode-descriptionForeground); font-size: 0.9em; overflow-wrap: anywhere; }
    .error { color: var(--vscode-errorForeground); }
    .toolbar { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: center; margin: 4px 0 8px; }
    .toolbar label { font-weight: 600; }
    .toolbar vscode-single-select { min-width: 240px; max-width: 100%; }
    .chart { position: relative; width: 100%; outline: none; border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, transparent)); border-radius: 2px; }
    .chart:focus-visible { outline: 1px solid var(--vscode-focusBorder); outline-offset: 1px; }
    svg.plot { display: block; width: 100%; height: ${HEIGHT}px; cursor: crosshair; user-select: none; }
    .grid { stroke: var(--vscode-editorWidget-border, var(--vscode-widget-border, #8884)); stroke-opacity: 0.45; stroke-width: 1; }
    .axis { stroke: var(--vscode-descriptionForeground); stroke-width: 1; }
    .tick { fill: var(--vscode-descriptionForeground); font-size: 11px; font-variant-numeric: tabular-nums; }
    .axis-label { fill: var(--vscode-descriptionForeground); font-size: 11px; }
    .line { fill: none; stroke-width: 1.6; stroke-linejoin: round; }
    .line.dashed { stroke-dasharray: 5 3; }
    .line.live { stroke-width: 2.2; }
    .c0 { stroke: var(--vscode-charts-blue); fill: var(--vscode-charts-blue); color: var(--vscode-charts-blue); }
    .c1 { stroke: var(--evo-orange); fill: var(--evo-orange); color: var(--evo-orange); }
    .c2 { stroke: var(--vscode-charts-green); fill: var(--vscode-charts-green); color: var(--vscode-charts-green); }
    .c3 { stroke: var(--vscode-charts-purple); fill: var(--vscode-charts-purple); color: var(--vscode-charts-purple); }
    .c4 { stroke: var(--vscode-charts-red); fill: var(--vscode-charts-red); color: var(--vscode-charts-red); }
    .c5 { stroke: var(--vscode-charts-yellow); fill: var(--vscode-charts-yellow); color: var(--vscode-charts-yellow); }
    path.line.c0, path.line.c1, path.line.c2, path.line.c3, path.line.c4, path.line.c5 { fill: none; }
    .promotion { stroke: var(--vscode-charts-green); stroke-dasharray: 3 3; stroke-width: 1; }
    .promotion-label { fill: var(--vscode-charts-green); font-size: 11px; }
    .marker { stroke: var(--vscode-editor-background); stroke-width: 1; }
    .marker.rejected { fill: none; stroke: currentColor; stroke-width: 2.5; stroke-linecap: round; }
    /* Under the rejected version's ✕: the background, so that it reads over the axis, the grid and the other lines. */
    .marker-halo { fill: none; stroke: var(--vscode-editor-background); stroke-width: 6; stroke-linecap: round; }
    .dump { fill: var(--vscode-charts-foreground, var(--vscode-descriptionForeground)); opacity: 0.8; }
    .key { display: inline-flex; align-items: center; gap: 4px; }
    .key svg.glyph { width: 10px; height: 10px; cursor: default; }
    .cursor { stroke: var(--vscode-foreground); stroke-opacity: 0.5; stroke-width: 1; }
    .dot { stroke: var(--vscode-editor-background); stroke-width: 2; }
    .readout { min-height: 2.6em; margin: 6px 0; font-variant-numeric: tabular-nums; }
    .readout b { font-weight: 600; }
    .legend { display: flex; flex-wrap: wrap; gap: 4px 18px; margin: 8px 0; }
    .legend .entry { display: flex; align-items: center; gap: 6px; }
    .swatch { display: inline-block; width: 16px; height: 0; border-top: 3px solid; vertical-align: middle; }
    .swatch.dashed { border-top-style: dashed; }
    .status { color: var(--vscode-descriptionForeground); font-size: 0.9em; }
    .status.promoted { color: var(--vscode-charts-green, var(--vscode-testing-iconPassed)); }
    .status.rejected { color: var(--vscode-errorForeground); }
    .status.live { color: var(--vscode-charts-blue); }
    .empty { margin: 24px 0; color: var(--vscode-descriptionForeground); }
    code { font-family: var(--vscode-editor-font-family, monospace); }
    `,
  ];

  @state() private live = new Map<string, LiveSeries>();
  @state() private hiddenSeries = new Set<string>();
  @state() private width = 800;
  /** The step under the cursor (mouse or keyboard) and the series it reads. */
  @state() private cursor: { key: string; index: number } | null = null;
  @state() private notice: string | null = null;

  @query('.chart') private chartEl?: HTMLElement;
  /** Each series' colour, given in the order series first appear and kept: a run imported later does not recolour the others. */
  private readonly colours = new Map<string, number>();

  private colourOf(key: string): number {
    let c = this.colours.get(key);
    if (c === undefined) this.colours.set(key, (c = this.colours.size));
    return c;
  }
  private resizeObserver: ResizeObserver | undefined;

  protected override listen(): void {
    host.onNotification(LiveCurvesNotification, (s) => {
      const next = new Map(this.live);
      next.set(s.jobId, s);
      this.live = next;
    });
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.resizeObserver?.disconnect();
  }

  protected override updated(): void {
    if (!this.resizeObserver && this.chartEl) {
      this.resizeObserver = new ResizeObserver(() => this.measure());
      this.resizeObserver.observe(this.chartEl);
      this.measure();
    }
  }

  private measure(): void {
    const w = this.chartEl?.clientWidth ?? 0;
    if (w && Math.abs(w - this.width) > 0.5) this.width = w;
  }

  protected override adopt(s: CurvesState): void {
    if (s.metric !== this.view.metric) this.cursor = null;
    this.view = s;
    const live = new Map(this.live);
    for (const l of s.live) live.set(l.jobId, l);
    this.live = live;
    this.notice = null;
  }

  /** Every series of the picked metric: the store's, then the live job logs' (under the first alias each logged). */
  private shown(): Shown[] {
    const marks = new Map(this.view.versions.map((v) => [v.version, v]));
    const out: Shown[] = this.view.series.map((s) => ({
      key: `store:${s.run}\u0000${s.version ?? ''}`,
      label: seriesLabel(s.run, s.version),
      run: s.run,
      version: s.version,
      metric: s.metric,
      points: s.points.map((p) => ({ step: p.step, value: p.value, rollouts: p.rollouts })),
      live: null,
      mark: s.version ? (marks.get(s.version) ?? null) : null,
      colour: this.colourOf(`store:${s.run}\u0000${s.version ?? ''}`),
    }));
    for (const l of this.live.values()) {
      const name = this.view.aliases.find((a) => l.metrics[a]?.length);
      if (!name) continue;
      const points = [...l.metrics[name]!].sort((a, b) => a[0] - b[0]).map(([step, value]) => ({ step, value, rollouts: 0 }));
      out.push({ key: `live:${l.jobId}`, label: `job ${l.jobId} · ${seriesLabel(l.run, l.version)}`, run: l.run, version: l.version, metric: name, points, live: l, mark: null, colour: this.colourOf(`live:${l.jobId}`) });
    }
    return out;
  }

  override render() {
    const v = this.view;
    const all = this.shown();
    return html`
      <header>
        <h1>Training curves</h1>
        <span class="meta" data-testid="curves-store">${v.store ?? ''}</span>
        <span class="grow"></span>
        ${host.inEditor ? nothing : html`<a href="../" data-testid="curves-explorer-link">Failure explorer</a>`}
        <vscode-button secondary icon="refresh" data-testid="curves-refresh" @click=${() => host.send(RefreshCurvesCommand, undefined)}>Refresh</vscode-button>
      </header>
      ${v.status === 'loading' ? html`<vscode-progress-ring aria-label="Reading the training curves"></vscode-progress-ring>` : nothing}
      ${v.error ? html`<p class="error" data-testid="curves-error">${shown(v.error)}</p>` : nothing}
      ${v.status === 'empty' && !all.length
        ? html`<p class="empty" data-testid="curves-empty">No training curves in the store yet. Import a trainer's log, metrics file or event files with <code>evotrainer import PATH</code>, or follow a running job's log ("Show Job Curves" in the Runs view).</p>`
        : nothing}
      ${v.metrics.length || all.length ? this.toolbar() : nothing}
      ${all.length ? this.chart(all) : v.metric && v.status === 'ready' ? html`<p class="empty">No run logged ${v.metric}.</p>` : nothing}
      ${all.length ? this.legend(all) : nothing}
    `;
  }

  private toolbar() {
    const v = this.view;
    const options = v.metrics.length ? v.metrics : v.metric ? [{ name: v.metric, label: v.metric, series: 0, catalog: false }] : [];
    return html`<div class="toolbar">
      <label id="metric-label" for="metric">Metric</label>
      <vscode-single-select id="metric" data-testid="curves-metric" aria-labelledby="metric-label" .value=${v.metric ?? ''}
        @change=${(e: Event) => {
          const metric = (e.target as HTMLSelectElement).value;
          if (metric && metric !== v.metric) host.send(SetCurveMetricCommand, { metric });
        }}>
        ${options.map((o) => html`<vscode-option value=${o.name} description=${`${o.series} run(s)`} ?selected=${o.name === v.metric}>${markHidden(o.label)}</vscode-option>`)}
      </vscode-single-select>
      <span class="meta">${v.series.length} run(s)${this.live.size ? ` · ${this.live.size} job log(s) followed live` : ''} · steps aligned</span>
    </div>`;
  }

  private chart(all: Shown[]) {
    const visible = all.filter((s) => !this.hiddenSeries.has(s.key));
    const W = Math.max(320, this.width);
    const plotW = W - MARGIN.left - MARGIN.right;
    const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
    let lo = Infinity;
    let hi = -Infinity;
    for (const s of visible) for (const p of s.points) {
      lo = Math.min(lo, p.step);
      hi = Math.max(hi, p.step);
    }
    if (lo === Infinity) {
      lo = 0;
      hi = 1;
    }
    if (lo === hi) hi = lo + 1;
    // Room above the axis (and its dump ticks) for a mark at a curve's lowest point.
    const ext = valueExtent(visible.flatMap((s) => s.points.map((p) => p.value)), 0.08) ?? [0, 1];
    const x = (step: number) => MARGIN.left + ((step - lo) / (hi - lo)) * plotW;
    const y = (value: number) => MARGIN.top + (1 - (value - ext[0]) / (ext[1] - ext[0])) * plotH;
    const xTicks = niceTicks(lo, hi, Math.max(2, Math.floor(plotW / 90))).filter((t) => Number.isInteger(t));
    const yTicks = niceTicks(ext[0], ext[1], 5);
    const cur = this.cursorPoint(visible);
    // Promotion points: where each promoted version's curve ends, one rule per step.
    const promotions = new Map<number, string[]>();
    for (const s of visible) {
      if (s.mark?.status !== 'promoted' || !s.points.length) continue;
      const at = s.points[s.points.length - 1]!.step;
      promotions.set(at, [...(promotions.get(at) ?? []), `${s.mark.version}${s.mark.tip ? ' ★' : ''}`]);
    }
    const dumps = new Set<number>();
    for (const s of visible) for (const p of s.points) if (p.rollouts > 0) dumps.add(p.step);
    const metric = this.view.metric ?? '';
    const describe = `${metric} over training steps ${lo} to ${hi} for ${visible.length} run(s): ${visible.map((s) => s.label).join(', ')}. Left and right arrows move between steps, up and down between runs, Enter opens the rollouts of that step in the failure explorer.`;
    return html`<div class="chart" data-testid="curves-chart" tabindex="0" role="application" aria-label=${describe} aria-describedby="readout"
        @keydown=${(e: KeyboardEvent) => this.onKey(e, visible)}>
      <svg class="plot" data-testid="curves-plot" viewBox="0 0 ${W} ${HEIGHT}" preserveAspectRatio="none" aria-hidden="true"
        @mousemove=${(e: MouseEvent) => this.onMove(e, visible, x, y, lo, hi, plotW)} @click=${() => this.openCursor(visible)}>
        ${yTicks.map((t) => svg`<line class="grid" x1=${MARGIN.left} x2=${W - MARGIN.right} y1=${y(t)} y2=${y(t)}></line><text class="tick" x=${MARGIN.left - 6} y=${y(t) + 4} text-anchor="end">${formatValue(t)}</text>`)}
        ${xTicks.map((t) => svg`<line class="grid" x1=${x(t)} x2=${x(t)} y1=${MARGIN.top} y2=${HEIGHT - MARGIN.bottom}></line><text class="tick" x=${x(t)} y=${HEIGHT - MARGIN.bottom + 14} text-anchor="middle">${t}</text>`)}
        <line class="axis" x1=${MARGIN.left} x2=${W - MARGIN.right} y1=${HEIGHT - MARGIN.bottom} y2=${HEIGHT - MARGIN.bottom}></line>
        <line class="axis" x1=${MARGIN.left} x2=${MARGIN.left} y1=${MARGIN.top} y2=${HEIGHT - MARGIN.bottom}></line>
        <text class="axis-label" x=${MARGIN.left + plotW / 2} y=${HEIGHT - 4} text-anchor="middle">step</text>
        ${[...dumps].map((st) => svg`<path class="dump" data-testid="dump-${st}" d="M${x(st).toFixed(1)},${HEIGHT - MARGIN.bottom - 8}l-4,7h8z"><title>rollouts dumped at step ${st}</title></path>`)}
        ${[...promotions].map(([st, versions]) => svg`<line class="promotion" data-testid="promotion-${st}" x1=${x(st)} x2=${x(st)} y1=${MARGIN.top} y2=${HEIGHT - MARGIN.bottom}></line><text class="promotion-label" x=${x(st) - 4} y=${MARGIN.top + 10} text-anchor="end">${markHidden(versions.join(', '))} promoted</text>`)}
        ${visible.map((s) => svg`<path class="line c${s.colour % COLOURS} ${s.colour >= COLOURS ? 'dashed' : ''} ${s.live ? 'live' : ''}" data-testid=${`line-${s.live ? `job-${s.live.jobId}` : s.label}`} d=${linePath(s.points, x, y)}></path>`)}
        ${visible.map((s) => this.marker(s, x, y))}
        ${cur ? svg`<line class="cursor" x1=${x(cur.point.step)} x2=${x(cur.point.step)} y1=${MARGIN.top} y2=${HEIGHT - MARGIN.bottom}></line>${Number.isFinite(cur.point.value) ? svg`<circle class="dot c${cur.series.colour % COLOURS}" cx=${x(cur.point.step)} cy=${y(cur.point.value)} r="4"></circle>` : nothing}` : nothing}
      </svg>
    </div>
    <div class="readout" id="readout" data-testid="curves-readout" aria-live="polite">${this.readout(visible, cur)}</div>`;
  }

  /** A version's standing at its curve's last point: ★ promoted, ✕ rejected. */
  private marker(s: Shown, x: (n: number) => number, y: (n: number) => number) {
    const last = [...s.points].reverse().find((p) => Number.isFinite(p.value));
    if (!s.mark || !last) return nothing;
    const cx = x(last.step);
    const cy = y(last.value);
    const title = `${s.mark.version} ${s.mark.status}${s.mark.promotedAt ? ` ${s.mark.promotedAt.slice(0, 16).replace('T', ' ')}` : ''}${s.mark.tip ? ' (the promoted line\u2019s tip)' : ''}`;
    if (s.mark.status === 'promoted') {
      const r = s.mark.tip ? 8 : 6;
      const star = Array.from({ length: 10 }, (_, i) => {
        const a = -Math.PI / 2 + (i * Math.PI) / 5;
        const rr = i % 2 ? r * 0.45 : r;
        return `${(cx + rr * Math.cos(a)).toFixed(1)},${(cy + rr * Math.sin(a)).toFixed(1)}`;
      }).join(' ');
      return svg`<polygon class="marker promoted c${s.colour % COLOURS}" data-testid="mark-${s.mark.version}" points=${star}><title>${title}</title></polygon>`;
    }
    if (s.mark.status === 'rejected') {
      const d = `M${cx - 6},${cy - 6}l12,12m0,-12l-12,12`;
      return svg`<path class="marker-halo" d=${d}></path><path class="marker rejected c${s.colour % COLOURS}" data-testid="mark-${s.mark.version}" d=${d}><title>${title}</title></path>`;
    }
    return svg`<circle class="marker c${s.colour % COLOURS}" data-testid="mark-${s.mark.version}" cx=${cx} cy=${cy} r="3.5"><title>${title}</title></circle>`;
  }

  private cursorPoint(visible: Shown[]): { series: Shown; point: ChartPoint } | null {
    if (!this.cursor) return null;
    const series = visible.find((s) => s.key === this.cursor!.key);
    const point = series?.points[this.cursor.index];
    return series && point ? { series, point } : null;
  }

  private readout(visible: Shown[], cur: { series: Shown; point: ChartPoint } | null) {
    if (this.notice) return html`<span data-testid="curves-notice">${this.notice}</span>`;
    if (!cur) return html`<span class="meta">Point at a step (or focus the chart and use the arrow keys) to read its values; click or press Enter to open the rollouts dumped at that step in the failure explorer.</span>`;
    const { series, point } = cur;
    const others = visible
      .filter((s) => s !== series)
      .map((s) => {
        const i = nearestIndex(s.points, point.step);
        return i >= 0 && s.points[i]!.step === point.step ? `${s.label} ${formatValue(s.points[i]!.value)}` : null;
      })
      .filter(Boolean);
    const dumped = series.live ? null : nearestDumpedStep(series.points, point.step);
    return html`<b>step ${point.step}</b> · ${series.label} <code>${shown(series.metric)}</code> <b data-testid="curves-value">${formatValue(point.value)}</b>
      · ${point.rollouts ? html`<span data-testid="curves-rollouts">${point.rollouts} rollouts dumped here</span>` : dumped !== null ? html`nearest rollouts at step ${dumped}` : html`no rollouts dumped`}
      ${others.length ? html`<br><span class="meta">${others.join(' · ')}</span>` : nothing}`;
  }

  private legend(all: Shown[]) {
    const dumps = all.some((s) => s.points.some((p) => p.rollouts > 0));
    return html`<div class="legend" role="group" aria-label="Runs and versions shown">
      ${all.map((s) => {
        const status = s.live ? (s.live.done ? 'job ended' : 'live') : s.mark ? `${s.mark.status}${s.mark.tip ? ' ★' : ''}` : '';
        const cls = s.live ? 'live' : (s.mark?.status ?? '');
        return html`<span class="entry">
          <vscode-checkbox data-testid=${`series-${s.live ? `job-${s.live.jobId}` : s.label}`} .checked=${!this.hiddenSeries.has(s.key)}
            @change=${(e: Event) => this.toggle(s.key, (e.target as HTMLInputElement).checked)}>
            <span class="swatch c${s.colour % COLOURS} ${s.colour >= COLOURS ? 'dashed' : ''}"></span> ${s.label}
          </vscode-checkbox>
          ${status ? html`<span class="status ${cls}">${status}</span>` : nothing}
        </span>`;
      })}
      <span class="meta key">${all.some((s) => s.mark) ? '★ promoted · ✕ rejected' : ''}${dumps ? html`${all.some((s) => s.mark) ? ' · ' : ''}<svg class="glyph" viewBox="0 0 10 10" aria-hidden="true"><path class="dump" d="M5,1l4,8h-8z"></path></svg> rollouts dumped at that step` : nothing}</span>
    </div>`;
  }

  private toggle(key: string, on: boolean): void {
    const next = new Set(this.hiddenSeries);
    if (on) next.delete(key);
    else next.add(key);
    this.hiddenSeries = next;
    if (this.cursor?.key === key && !on) this.cursor = null;
  }

  private onMove(e: MouseEvent, visible: Shown[], x: (n: number) => number, y: (n: number) => number, lo: number, hi: number, plotW: number): void {
    const svgEl = e.currentTarget as SVGSVGElement;
    const box = svgEl.getBoundingClientRect();
    const W = Math.max(320, this.width);
    const px = ((e.clientX - box.left) / box.width) * W;
    const py = ((e.clientY - box.top) / box.height) * HEIGHT;
    const step = lo + ((px - MARGIN.left) / plotW) * (hi - lo);
    // The series nearest the pointer, at the step nearest it.
    let best: { key: string; index: number; d: number } | null = null;
    for (const s of visible) {
      const i = nearestIndex(s.points, step);
      if (i < 0) continue;
      const p = s.points[i]!;
      const d = Math.abs(x(p.step) - px) + (Number.isFinite(p.value) ? Math.abs(y(p.value) - py) : HEIGHT);
      if (!best || d < best.d) best = { key: s.key, index: i, d };
    }
    this.notice = null;
    if (best && (this.cursor?.key !== best.key || this.cursor.index !== best.index)) this.cursor = { key: best.key, index: best.index };
  }

  private onKey(e: KeyboardEvent, visible: Shown[]): void {
    if (!visible.length) return;
    let cur = this.cursor && visible.some((s) => s.key === this.cursor!.key) ? this.cursor : null;
    const series = (key: string) => visible.find((s) => s.key === key)!;
    if (!cur) cur = { key: visible[0]!.key, index: 0 };
    const s = series(cur.key);
    let next = cur;
    switch (e.key) {
      case 'ArrowRight':
        next = { key: cur.key, index: Math.min(s.points.length - 1, cur.index + (e.shiftKey ? 10 : 1)) };
        break;
      case 'ArrowLeft':
        next = { key: cur.key, index: Math.max(0, cur.index - (e.shiftKey ? 10 : 1)) };
        break;
      case 'Home':
        next = { key: cur.key, index: 0 };
        break;
      case 'End':
        next = { key: cur.key, index: s.points.length - 1 };
        break;
      case 'ArrowUp':
      case 'ArrowDown': {
        const k = visible.findIndex((v) => v.key === cur!.key);
        const other = visible[(k + (e.key === 'ArrowDown' ? 1 : visible.length - 1)) % visible.length]!;
        next = { key: other.key, index: Math.max(0, nearestIndex(other.points, s.points[cur.index]?.step ?? 0)) };
        break;
      }
      case 'Enter':
      case ' ':
        e.preventDefault();
        this.cursor = cur;
        this.openCursor(visible);
        return;
      default:
        return;
    }
    e.preventDefault();
    this.notice = null;
    this.cursor = next;
  }

  /** The failure explorer on the rollouts of the cursor's step (or the nearest step that dumped some). */
  private openCursor(visible: Shown[]): void {
    const cur = this.cursorPoint(visible);
    if (!cur) return;
    const { series, point } = cur;
    if (series.live) {
      this.notice = `Job ${series.live.jobId}'s rollouts are not in the store yet: fetch its outputs ("Fetch Outputs" in the Runs view) to read them.`;
      return;
    }
    const step = point.rollouts ? point.step : nearestDumpedStep(series.points, point.step);
    if (step === null) {
      this.notice = `No rollouts of ${series.label} are in the store for any logged step: import its rollout dumps to open them from here.`;
      return;
    }
    this.notice = step === point.step ? null : `Step ${point.step} dumped no rollouts: opened the nearest step that did, ${step}.`;
    if (host.inEditor) host.send(OpenStepCommand, { run: series.run, version: series.version, step });
    // In a browser (`evotrainer view`), the explorer is the page above this one.
    else window.location.assign(new URL(`../?${new URLSearchParams({ run: series.run, ...(series.version ? { version: series.version } : {}), step: String(step) }).toString()}`, window.location.href).href);
  }
}
