import '@vscode-elements/elements/dist/vscode-button/index.js';
import { css, html, nothing, svg } from 'lit';
import { customElement } from 'lit/decorators.js';
import { DidChangeLineageNotification, NODE_HEIGHT, NODE_WIDTH, OpenVersionCommand, RefreshLineageCommand, type LineageGraphNode, type LineageState } from '../../viewer/lineage/protocol';
import { AppElement, appStyles, host } from '../shared/app';
import { markHidden, shown } from '../shared/hidden';


/** Text is cut to fit a node; the whole text is in the node's tooltip. */
/** Text in the SVG (no markup there): hidden characters as their marks, then cut. */
const clip = (raw: string, n: number) => {
  const s = markHidden(raw);
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
};

@customElement('evo-lineage-app')
export class LineageApp extends AppElement<LineageState> {
  protected readonly stateNotification = DidChangeLineageNotification;

  static override styles = [
    appStyles,
    css`
    :host { padding: 16px 24px; }
    header { display: flex; align-items: center; gap: 12px; margin-bottom: 8px; }
    h1 { font-size: 1.4em; font-weight: 600; margin: 0; flex: 1; }
    .meta { color: var(--vscode-descriptionForeground); font-size: 0.9em; }
    .legend { display: flex; gap: 18px; flex-wrap: wrap; margin: 6px 0 14px; }
    .legend span { display: inline-flex; align-items: center; gap: 6px; }
    .swatch { display: inline-block; width: 22px; height: 0; border-top: 3px solid; }
    .swatch.promoted { border-color: var(--vscode-charts-green); }
    .swatch.candidate { border-color: var(--vscode-descriptionForeground); border-top-width: 1px; }
    .swatch.rejected { border-color: var(--vscode-charts-red); border-top-style: dashed; border-top-width: 2px; }
    .canvas { overflow: auto; border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, #8884)); border-radius: 4px; background: var(--vscode-editor-background); }
    svg { display: block; }
    .edge { fill: none; stroke: var(--vscode-descriptionForeground); stroke-width: 1.2; opacity: 0.7; }
    .edge.promoted { stroke: var(--vscode-charts-green); stroke-width: 3; opacity: 1; }
    .edge.rejected { stroke: var(--vscode-charts-red); stroke-dasharray: 5 4; opacity: 0.9; }
    .node { cursor: pointer; }
    .node rect { fill: var(--vscode-editorWidget-background); stroke: var(--vscode-widget-border, var(--vscode-descriptionForeground)); stroke-width: 1; }
    .node.promoted rect { stroke: var(--vscode-charts-green); stroke-width: 2.5; }
    .node.tip rect { fill: color-mix(in srgb, var(--vscode-charts-green) 14%, var(--vscode-editorWidget-background)); }
    .node.rejected rect { stroke: var(--vscode-charts-red); stroke-dasharray: 5 3; fill: color-mix(in srgb, var(--vscode-charts-red) 8%, var(--vscode-editorWidget-background)); }
    .node:hover rect, .node:focus rect { stroke: var(--vscode-focusBorder); stroke-width: 2.5; outline: none; }
    .node:focus { outline: none; }
    .id { font-weight: 700; fill: var(--vscode-foreground); }
    .slug { fill: var(--vscode-descriptionForeground); }
    .score { fill: var(--vscode-foreground); font-variant-numeric: tabular-nums; }
    .up { fill: var(--vscode-charts-green); }
    .down { fill: var(--vscode-charts-red); }
    .status { fill: var(--vscode-descriptionForeground); font-size: 0.85em; }
    .node.rejected .status { fill: var(--vscode-charts-red); }
    text { font-family: var(--vscode-font-family); font-size: 12px; }
    section { margin-top: 18px; }
    h2 { font-size: 1.05em; margin: 0 0 6px; }
    .neg { border-left: 3px solid var(--vscode-charts-red); padding: 4px 10px; margin: 6px 0; background: var(--vscode-editorWidget-background); }
    .neg b { cursor: pointer; }
    .error { color: var(--vscode-errorForeground); }
    `,
  ];



  private open(id: string) {
    host.send(OpenVersionCommand, { id });
  }

  override render() {
    const v = this.view;
    const rejected = v.nodes.filter((n) => n.status === 'rejected');
    return html`
      <header>
        <h1>Lineage</h1>
        <vscode-button icon="refresh" secondary @click=${() => host.send(RefreshLineageCommand, undefined)}>Refresh</vscode-button>
      </header>
      <div class="meta" data-testid="lineage-meta">${shown(`${v.harness ?? 'no harness'}${v.nodes.length ? ` · ${v.nodes.length} versions · promoted ${v.promoted ?? '—'}${v.metric ? ` · scores: ${v.metric}` : ''}` : ''}`)}</div>
      ${v.error ? html`<p class=${v.status === 'failed' ? 'error' : 'meta'} data-testid="lineage-message">${shown(v.error)}</p>` : nothing}
      ${v.status === 'empty' && !v.error ? html`<p class="meta" data-testid="lineage-message">No versions yet.</p>` : nothing}
      ${v.nodes.length
        ? html`<div class="legend meta">
              <span><i class="swatch promoted"></i>promoted line</span>
              <span><i class="swatch candidate"></i>candidate</span>
              <span><i class="swatch rejected"></i>rejected (negative evidence)</span>
            </div>
            <div class="canvas">${this.graph(v)}</div>`
        : nothing}
      ${rejected.length
        ? html`<section data-testid="lineage-negative">
            <h2>Negative evidence</h2>
            ${rejected.map((n) => html`<div class="neg"><b @click=${() => this.open(n.id)}>${shown(`${n.id} ${n.slug}`)}</b>: ${shown(n.rejectReason ?? 'no reason recorded')}</div>`)}
          </section>`
        : nothing}
    `;
  }

  private graph(v: LineageState) {
    const at = new Map(v.nodes.map((n) => [n.id, n]));
    const edges = v.edges.map((e) => {
      const a = at.get(e.from);
      const b = at.get(e.to);
      if (!a || !b) return nothing;
      const x1 = a.x + NODE_WIDTH;
      const y1 = a.y + NODE_HEIGHT / 2;
      const x2 = b.x;
      const y2 = b.y + NODE_HEIGHT / 2;
      const mx = (x1 + x2) / 2;
      return svg`<path class="edge ${e.promoted ? 'promoted' : ''} ${e.rejected ? 'rejected' : ''}" d="M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}"></path>`;
    });
    return html`<svg width=${v.width} height=${v.height} viewBox="0 0 ${v.width} ${v.height}" role="img" aria-label="version tree" data-testid="lineage-graph">
      ${edges}${v.nodes.map((n) => this.node(n))}
    </svg>`;
  }

  private node(n: LineageGraphNode) {
    const cls = ['node', n.onPromotedLine ? 'promoted' : '', n.isPromotedTip ? 'tip' : '', n.status === 'rejected' ? 'rejected' : ''].join(' ');
    const title = [`${n.id} (${n.status})`, n.hypothesis ?? '', n.rejectReason ? `rejected: ${n.rejectReason}` : ''].filter(Boolean).join('\n');
    return svg`<g class=${cls} transform="translate(${n.x},${n.y})" tabindex="0" role="button" data-testid="lineage-node-${n.id}" data-status=${n.status} data-promoted=${n.onPromotedLine ? 'true' : 'false'}
        @click=${() => this.open(n.id)} @keydown=${(e: KeyboardEvent) => (e.key === 'Enter' || e.key === ' ') && this.open(n.id)}>
      <title>${markHidden(title)}</title>
      <rect width=${NODE_WIDTH} height=${NODE_HEIGHT} rx="5"></rect>
      <text x="10" y="19"><tspan class="id">${markHidden(n.id)}${n.isPromotedTip ? ' ★' : ''}</tspan><tspan class="slug" dx="6">${clip(n.slug, 22)}</tspan></text>
      <text x="10" y="37" class="score">${n.score ?? '—'}${n.delta ? svg`<tspan dx="6" class=${n.trend > 0 ? 'up' : n.trend < 0 ? 'down' : ''}>${n.delta}</tspan>` : nothing}</text>
      <text x="10" y="51" class="status">${n.status === 'rejected' ? clip(`rejected: ${n.rejectReason ?? ''}`, 30) : n.status}</text>
    </g>`;
  }
}
