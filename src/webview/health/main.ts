import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import '@vscode-elements/elements/dist/vscode-icon/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import { css, html, nothing } from 'lit';
import { customElement } from 'lit/decorators.js';
import { DidChangeHealthNotification, OpenHealthRolloutCommand, RefreshHealthCommand, SetHealthScopeCommand, type HealthState, type MetricResult } from '../../viewer/health/protocol';
import { AppElement, appStyles, host } from '../shared/app';
import { actionLink } from '../shared/link';
import { cssProps } from '../shared/style';
import { markHidden, shown } from '../shared/hidden';

const DIMENSIONS = ['results', 'signal', 'behavior', 'efficiency', 'model_state', 'test_structure', 'sampling'] as const;

function show(m: MetricResult): string {
  if (m.value === null) return 'not available';
  if (m.unit === 'ratio') return `${(m.value * 100).toFixed(1)}%`;
  return Math.abs(m.value) >= 100 ? m.value.toFixed(0) : m.value.toFixed(2);
}

@customElement('evo-health-app')
export class HealthApp extends AppElement<HealthState> {
  protected readonly stateNotification = DidChangeHealthNotification;

  static override styles = [
    appStyles,
    css`
    :host { padding: 16px 24px; }
    header { display: flex; align-items: center; gap: 12px; margin-bottom: 12px; }
    h1 { font-size: 1.4em; font-weight: 600; margin: 0; flex: 1; }
    h2 { font-size: 1.05em; margin: 0 0 8px; text-transform: capitalize; }
    .meta { color: var(--vscode-descriptionForeground); font-size: 0.9em; }
    .cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 12px; margin: 12px 0 20px; }
    .card { border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, #8884)); border-radius: 4px; padding: 10px 12px; background: var(--vscode-editorWidget-background); }
    .card.alerting { border-color: var(--vscode-editorWarning-foreground); }
    .card.critical { border-color: var(--vscode-errorForeground); }
    .row { display: flex; justify-content: space-between; gap: 8px; padding: 2px 0; }
    .row .name { overflow-wrap: anywhere; }
    .row .value { font-variant-numeric: tabular-nums; white-space: nowrap; }
    .na { color: var(--vscode-disabledForeground, var(--vscode-descriptionForeground)); }
    .row.warning .value { color: var(--vscode-editorWarning-foreground); font-weight: 600; }
    .row.critical .value { color: var(--vscode-errorForeground); font-weight: 600; }
    section { margin-top: 16px; }
    .finding { border-left: 3px solid var(--vscode-editorWarning-foreground); padding: 6px 10px; margin: 6px 0; background: var(--vscode-editorWidget-background); }
    .finding.critical { border-left-color: var(--vscode-errorForeground); }
    .finding .title { font-weight: 600; }
    .bars { display: grid; grid-template-columns: max-content 1fr max-content; gap: 4px 10px; align-items: center; }
    .bar { height: 10px; background: var(--vscode-charts-blue, var(--vscode-focusBorder)); border-radius: 2px; }
    .bar.success { background: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); }
    .error { color: var(--vscode-errorForeground); }
    .scope { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; margin: 4px 0 8px; }
    .scope .label { font-weight: 600; }
    .scope vscode-single-select { min-width: 220px; max-width: 100%; }
    .leaks { margin: 2px 0 6px 10px; font-size: 0.9em; }
    .leak { overflow-wrap: anywhere; }
    .leak code { font-family: var(--vscode-editor-font-family, monospace); }
    a.open { cursor: pointer; color: var(--vscode-textLink-foreground); }
    a.open:hover, a.open:focus { color: var(--vscode-textLink-activeForeground); text-decoration: underline; }
    `,
  ];



  /** The rollouts a leak metric saw (the first few), each opening in the Failure Explorer, at the turn that showed the answer when known. */
  private leaks(m: MetricResult) {
    if (!m.leaks?.length) return nothing;
    const link = (label: string, title: string, rolloutId: number, turn: number | null, testid: string) =>
      actionLink({ label, title, testid, className: 'open', onActivate: () => host.send(OpenHealthRolloutCommand, turn === null ? { rolloutId } : { rolloutId, turn }) });
    return html`<div class="leaks" data-testid="leaks-${m.name}">
      ${m.leaks.map((l) => {
        const turn = l.turn === null ? null : l.turn === 0 ? 'before turn 1' : `turn ${l.turn}`;
        return html`<div class="leak">${link(`rollout ${l.rollout}`, `Open rollout ${l.rollout} in the Failure Explorer`, l.rollout, null, `leak-rollout-${l.rollout}`)} <span class="meta">(${shown(l.prompt)})</span>${turn === null ? nothing : html`, ${link(turn, `Open rollout ${l.rollout} at ${turn} in the Failure Explorer`, l.rollout, l.turn, `leak-turn-${l.rollout}`)}`}: <code>${shown(l.channel)}</code></div>`;
      })}
    </div>`;
  }

  override render() {
    const { status, report, findings, failureModes, problems, error, store } = this.view;
    return html`
      <header>
        <h1>Health report</h1>
        ${status === 'loading' ? html`<vscode-progress-ring aria-label="Computing"></vscode-progress-ring>` : nothing}
        <vscode-button icon="refresh" ?disabled=${status === 'loading'} @click=${() => host.send(RefreshHealthCommand, undefined)}>Refresh</vscode-button>
      </header>
      <div class="meta">${shown(store ?? 'no store')}${report ? ` · ${report.rollouts} rollouts in ${report.groups} groups${report.curvePoints ? ` · ${report.curvePoints} training-curve values` : ''}` : ''}</div>
      ${this.scopePicker()}
      ${error ? html`<p class=${status === 'failed' ? 'error' : 'meta'} data-testid="health-message">${shown(error)}</p>` : nothing}
      ${status === 'empty' && !error ? html`<p class="meta" data-testid="health-message">No rollouts or training curves yet: import some with <code>evotrainer import PATH</code>.</p>` : nothing}
      ${report && (report.rollouts || report.curvePoints) ? this.body(report.metrics, findings, failureModes) : nothing}
      ${problems?.length
        ? html`<section data-testid="health-problems"><h2>Harness diagnostics that could not run</h2>${problems.map((p) => html`<div class="meta">${shown(p)}</div>`)}</section>`
        : nothing}
    `;
  }

  /** Which rollouts this report pools, and the other scopes to pick. */
  private scopePicker() {
    const { scope, scopes } = this.view;
    const current = scopes.find((o) => o.key === scope);
    if (!current) return nothing;
    // Each option says whether it is the scope: the select re-reads its options when they change (a run imported meanwhile).
    return html`<div class="scope">
      <span class="label" data-testid="health-scope">Scope: ${shown(current.label)}</span>
      <vscode-single-select data-testid="health-scope-select" aria-label="Scope of the report" .value=${scope}
        @change=${(e: Event) => host.send(SetHealthScopeCommand, { scope: (e.target as HTMLSelectElement).value })}>
        ${scopes.map((o) => html`<vscode-option value=${o.key} ?selected=${o.key === scope}>${markHidden(o.label)}</vscode-option>`)}
      </vscode-single-select>
    </div>`;
  }

  private body(metrics: MetricResult[], findings: HealthState['findings'], modes: HealthState['failureModes']) {
    const max = Math.max(1, ...modes.map((m) => m.count));
    return html`
      <section data-testid="health-findings">
        <h2>Findings</h2>
        ${findings.length
          ? findings.map((f) => html`<div class="finding ${f.severity}" data-testid="finding-${f.rule}"><div class="title">${shown(`${f.rule} · ${f.title}`)}</div><div class="meta">${shown(f.suggestion)}</div></div>`)
          : html`<p class="meta">No rule fired.</p>`}
      </section>
      <div class="cards" data-testid="health-report">
        ${DIMENSIONS.map((d) => {
          const ms = metrics.filter((m) => m.dimension === d);
          if (!ms.length) return nothing;
          const worst = ms.some((m) => m.status === 'critical') ? 'critical' : ms.some((m) => m.status === 'warning') ? 'alerting' : '';
          return html`<div class="card ${worst}">
            <h2>${d.replace('_', ' ')}</h2>
            ${ms.map((m) => html`<div class="row ${m.status === 'n/a' ? 'na' : m.status}" title=${markHidden(m.description)} data-testid="metric-${m.name}" data-status=${m.status}>
              <span class="name">${shown(m.name.replace(/_/g, ' '))}</span><span class="value">${show(m)}</span>
            </div>${this.leaks(m)}`)}
          </div>`;
        })}
      </div>
      <section>
        <h2>Failure modes</h2>
        <div class="bars" data-testid="failure-modes">
          ${modes.map((m) => html`<span>${shown(m.mode.replace(/_/g, ' '))}</span><div class="bar ${m.mode === 'success' ? 'success' : ''}" data-testid="mode-bar-${m.mode}" data-count=${m.count} ${cssProps({ width: `${Math.max(2, (100 * m.count) / max)}%` })}></div><span class="meta">${m.count}</span>`)}
        </div>
      </section>
    `;
  }
}
