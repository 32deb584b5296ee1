import { css, html, LitElement, nothing, type PropertyValues } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import type { TokenStrip } from '../../viewer/explorer/protocol';
import { ENTROPY_FULL, intensity, LOGPROB_FULL, stripColumns, summarize, type StripColumn } from './tokenHeat';

const fmt = (v: number | null) => (v === null ? '—' : (Math.round(v * 1000) / 1000).toString());
const KIND_LABEL: Record<TokenStrip['kind'], string> = { logprob: 'log-probability', entropy: 'entropy' };

/**
 * A heat strip of one model call's per-token values, drawn on a canvas (one rectangle per
 * pixel column, whatever the length): deeper colour = a more surprising token (low
 * log-probability) or a more uncertain one (high entropy). Pointer or arrow keys read a
 * token's position and value. Only numbers are shown: no rollout text reaches it.
 */
@customElement('evo-token-strip')
export class TokenStripView extends LitElement {
  static override styles = css`
    :host { display: block; margin: 4px 0 6px; }
    .head { display: flex; flex-wrap: wrap; gap: 2px 10px; font-size: 0.9em; color: var(--vscode-descriptionForeground); }
    canvas { display: block; width: 100%; height: 14px; margin-top: 2px; border-radius: 2px; cursor: crosshair; background: var(--vscode-editorWidget-background); outline: none; }
    canvas:focus-visible { outline: 1px solid var(--vscode-focusBorder); outline-offset: 1px; }
    .readout { min-height: 1.3em; font-size: 0.9em; font-variant-numeric: tabular-nums; }
  `;

  @property({ attribute: false }) strip!: TokenStrip;
  @state() private cursor: number | null = null;
  @query('canvas') private canvas?: HTMLCanvasElement;
  private columns: StripColumn[] = [];
  private resize: ResizeObserver | undefined;
  private theme: MutationObserver | undefined;

  override connectedCallback(): void {
    super.connectedCallback();
    // The theme's colours are read when drawing: draw again when the theme changes.
    this.theme = new MutationObserver(() => this.draw());
    this.theme.observe(document.body, { attributes: true, attributeFilter: ['class'] });
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.resize?.disconnect();
    this.theme?.disconnect();
    this.resize = undefined;
  }

  protected override updated(changed: PropertyValues): void {
    if (!this.resize && this.canvas) {
      this.resize = new ResizeObserver(() => this.draw());
      this.resize.observe(this.canvas);
    }
    if (changed.has('strip') || changed.has('cursor')) this.draw();
  }

  private draw(): void {
    const canvas = this.canvas;
    if (!canvas || !this.strip) return;
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.floor(canvas.clientWidth));
    const h = Math.max(1, Math.floor(canvas.clientHeight));
    if (canvas.width !== w * dpr || canvas.height !== h * dpr) {
      canvas.width = w * dpr;
      canvas.height = h * dpr;
    }
    const ctx = canvas.getContext('2d');
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const style = getComputedStyle(this);
    const colour = style.getPropertyValue(this.strip.kind === 'logprob' ? '--vscode-charts-red' : '--vscode-charts-orange').trim() || '#f14c4c';
    const calm = style.getPropertyValue('--vscode-charts-blue').trim() || '#3794ff';
    // Columns at least 2 px wide, so that one unlikely token among thousands still shows.
    this.columns = stripColumns(this.strip.values, this.strip.kind, w / 2);
    const cw = w / this.columns.length;
    // A faint base for every token with a value, the heat over it.
    this.columns.forEach((c, i) => {
      if (c.worst === null) return;
      ctx.globalAlpha = 0.18;
      ctx.fillStyle = calm;
      ctx.fillRect(i * cw, 0, Math.max(1, cw), h);
      const a = intensity(c.worst, this.strip.kind);
      if (a <= 0) return;
      ctx.globalAlpha = 0.15 + 0.85 * a;
      ctx.fillStyle = colour;
      ctx.fillRect(i * cw, 0, Math.max(1, cw), h);
    });
    ctx.globalAlpha = 1;
    if (this.cursor !== null) {
      const col = this.columns.findIndex((c) => this.cursor! >= c.from && this.cursor! < c.to);
      if (col >= 0) {
        ctx.fillStyle = style.getPropertyValue('--vscode-foreground').trim() || '#ccc';
        ctx.fillRect(col * cw + cw / 2 - 1, 0, 2, h);
      }
    }
  }

  private pointAt(e: MouseEvent): void {
    const box = (e.currentTarget as HTMLElement).getBoundingClientRect();
    const col = this.columns[Math.floor(((e.clientX - box.left) / box.width) * this.columns.length)];
    if (col) this.cursor = col.worstAt;
  }

  private onKey(e: KeyboardEvent): void {
    const n = this.strip.values.length;
    const at = this.cursor ?? -1;
    const next = e.key === 'ArrowRight' ? at + (e.shiftKey ? 50 : 1) : e.key === 'ArrowLeft' ? at - (e.shiftKey ? 50 : 1) : e.key === 'Home' ? 0 : e.key === 'End' ? n - 1 : null;
    if (next === null) return;
    e.preventDefault();
    this.cursor = Math.max(0, Math.min(n - 1, next));
  }

  override render() {
    const s = this.strip;
    if (!s) return nothing;
    const sum = summarize(s.values, s.kind);
    const what = KIND_LABEL[s.kind];
    const label = `Per-token ${what} of ${sum.tokens.toLocaleString('en-US')} tokens: mean ${fmt(sum.mean)}, ${s.kind === 'logprob' ? 'lowest' : 'highest'} ${fmt(sum.worst)} at token ${sum.worstAt + 1}, ${sum.extreme} token(s) ${s.kind === 'logprob' ? `at or below ${LOGPROB_FULL}` : `at or above ${ENTROPY_FULL}`}. Arrow keys read each token.`;
    const v = this.cursor === null ? undefined : s.values[this.cursor];
    return html`<div class="head">
        <span>${what} per token</span><span>${sum.tokens.toLocaleString('en-US')} tokens</span><span>mean ${fmt(sum.mean)}</span>
        <span>${s.kind === 'logprob' ? 'lowest' : 'highest'} ${fmt(sum.worst)} (token ${sum.worstAt + 1})</span>
      </div>
      <canvas data-testid="token-strip-${s.kind}-${s.turn}" tabindex="0" role="img" aria-label=${label} aria-describedby="readout"
        @mousemove=${(e: MouseEvent) => this.pointAt(e)} @mouseleave=${() => (this.cursor = null)} @keydown=${(e: KeyboardEvent) => this.onKey(e)}></canvas>
      <div class="readout" id="readout" aria-live="polite">${this.cursor === null ? '' : `token ${this.cursor + 1} of ${s.values.length}: ${what} ${v === null || v === undefined ? 'not given' : fmt(v)}`}</div>`;
  }
}
