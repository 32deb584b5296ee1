import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import { css, html, nothing } from 'lit';
import { customElement } from 'lit/decorators.js';
import { DidChangeVersionNotification, OpenFileDiffCommand, RunVersionActionCommand, type VersionEvidenceState } from '../../viewer/version/protocol';
import { AppElement, appStyles, host } from '../shared/app';
import { actionLink } from '../shared/link';
import { markHidden, shown } from '../shared/hidden';


const num = (n: number | null) => (n === null ? '—' : String(Number(n.toPrecision(4))));
const signed = (n: number | null) => (n === null ? '' : n === 0 ? '±0' : `${n > 0 ? '+' : '−'}${num(Math.abs(n))}`);
const when = (iso: string) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : '');

@customElement('evo-version-app')
export class VersionApp extends AppElement<VersionEvidenceState> {
  protected readonly stateNotification = DidChangeVersionNotification;

  static override styles = [
    appStyles,
    css`
    :host { padding: 14px 20px; }
    header { display: flex; align-items: baseline; gap: 10px; flex-wrap: wrap; }
    h1 { font-size: 1.35em; font-weight: 600; margin: 0; }
    h2 { font-size: 0.85em; text-transform: uppercase; letter-spacing: 0.04em; color: var(--vscode-descriptionForeground); margin: 0 0 6px; font-weight: 600; }
    .badge { border-radius: 10px; padding: 1px 8px; font-size: 0.85em; border: 1px solid var(--vscode-widget-border, var(--vscode-descriptionForeground)); }
    .badge.promoted { border-color: var(--vscode-charts-green); color: var(--vscode-charts-green); }
    .badge.rejected { border-color: var(--vscode-charts-red); color: var(--vscode-charts-red); }
    .meta { color: var(--vscode-descriptionForeground); font-size: 0.9em; overflow-wrap: anywhere; }
    section { margin-top: 14px; padding: 10px 12px; border-radius: 4px; background: var(--vscode-editorWidget-background); border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, #8884)); }
    section.empty { opacity: 0.85; }
    .hyp { font-size: 1.05em; margin: 0 0 6px; overflow-wrap: anywhere; }
    dl { display: grid; grid-template-columns: max-content 1fr; gap: 3px 12px; margin: 0; }
    dt { color: var(--vscode-descriptionForeground); }
    dd { margin: 0; overflow-wrap: anywhere; }
    code { font-family: var(--vscode-editor-font-family); }
    table { border-collapse: collapse; width: 100%; }
    td, th { text-align: left; padding: 2px 8px 2px 0; font-variant-numeric: tabular-nums; }
    th { color: var(--vscode-descriptionForeground); font-weight: normal; }
    .up { color: var(--vscode-charts-green); }
    .down { color: var(--vscode-charts-red); }
    .reason { display: flex; gap: 8px; padding: 2px 0; }
    .ok { color: var(--vscode-charts-green); }
    .fail { color: var(--vscode-charts-red); }
    .files a { display: block; cursor: pointer; color: var(--vscode-textLink-foreground); padding: 1px 0; }
    .files a:hover { color: var(--vscode-textLink-activeForeground); text-decoration: underline; }
    .rejected-note { border-left: 3px solid var(--vscode-charts-red); padding-left: 8px; }
    .actions { display: flex; gap: 8px; margin-top: 12px; }
    ol { margin: 0; padding-left: 18px; }
    li { margin: 2px 0; }
    .error { color: var(--vscode-errorForeground); }
    .warn { color: var(--vscode-charts-yellow); }
    .verdict { letter-spacing: 0.02em; }
    .verdict.pass, .verdict.promote { color: var(--vscode-charts-green); }
    .verdict.fail, .verdict.reject { color: var(--vscode-charts-red); }
    .verdict.not_replayable, .verdict.needs_human { color: var(--vscode-charts-yellow); }
    dl.figures { margin: 6px 0; }
    ul.reasons { margin: 4px 0; padding-left: 18px; }
    ul.reasons li { overflow-wrap: anywhere; }
    `,
  ];



  override render() {
    const v = this.view;
    if (v.status === 'loading') return html`<vscode-progress-ring aria-label="Loading"></vscode-progress-ring>`;
    if (v.status === 'failed') return html`<p class="error" data-testid="version-error">${shown(v.error)}</p>`;
    const decided = v.state === 'promoted' || v.state === 'rejected';
    // A backtest replays a committed intervention: a version with its own commit, not decided yet.
    const canBacktest = !decided && v.parent !== null && v.intervention !== null;
    return html`
      <header>
        <h1 data-testid="version-title">${shown(v.id)}</h1>
        <span class="badge ${v.state}" data-testid="version-state">${v.isPromoted ? 'promoted ★' : v.state}</span>
        <span class="meta">${shown(v.branch)} @ <code>${v.commit.slice(0, 12)}</code>${v.parent ? shown(` · parent ${v.parent}`) : ' · root'} · layer ${shown(v.layer)}</span>
      </header>
      ${v.rejectReason ? html`<section class="rejected-note" data-testid="version-rejected"><h2>Rejected — negative evidence</h2>${shown(v.rejectReason)}</section>` : nothing}
      <section data-testid="version-hypothesis">
        <h2>Hypothesis</h2>
        ${v.hypothesis
          ? html`<p class="hyp">${shown(v.hypothesis.change)}</p>
              <dl>
                <dt>target metric</dt><dd><code>${shown(v.hypothesis.targetMetric)}</code></dd>
                <dt>success criterion</dt><dd data-testid="version-criterion"><code>${shown(v.hypothesis.successCriterion)}</code></dd>
                ${v.hypothesis.because ? html`<dt>because</dt><dd>${shown(v.hypothesis.because)}</dd>` : nothing}
                ${v.skill ? html`<dt>from skill</dt><dd>${shown(v.skill)}</dd>` : nothing}
              </dl>`
          : html`<p class="meta">${v.parent ? 'No hypothesis recorded.' : 'The root version: the baseline every version is compared with.'}</p>`}
      </section>
      ${v.intervention
        ? html`<section data-testid="version-intervention">
            <h2>Intervention</h2>
            <dl>
              <dt>factor</dt><dd><code>${shown(v.intervention.factor) || '—'}</code></dd>
              <dt>rollback</dt><dd>${shown(v.intervention.rollbackPlan)}</dd>
              ${v.intervention.override ? html`<dt>single-factor override</dt><dd>${shown(v.intervention.override)}</dd>` : nothing}
            </dl>
            <div class="files" data-testid="version-files">
              ${v.intervention.changedPaths.map((f) => actionLink({ label: shown(f), title: markHidden(`Open the diff against ${v.parent}`), onActivate: () => host.send(OpenFileDiffCommand, { file: f }) }))}
            </div>
          </section>`
        : nothing}
      <section class=${v.backtest ? '' : 'empty'} data-testid="version-backtest">
        <h2>Backtest</h2>
        ${v.backtest
          ? html`${v.backtest.verdict ? html`<div><b class="verdict ${v.backtest.verdict}" data-testid="version-backtest-verdict">${v.backtest.verdict === 'not_replayable' ? 'NOT REPLAYABLE' : v.backtest.verdict.toUpperCase()}</b>${v.backtest.against ? html` <span class="meta">${shown(`vs ${v.backtest.against}${v.backtest.kinds.length ? ` · ${v.backtest.kinds.join(', ')}` : ''}`)}</span>` : nothing}</div>` : nothing}
              <div>${shown(v.backtest.summary)}</div>
              ${v.backtest.figures.length ? html`<dl class="figures">${v.backtest.figures.map((f) => html`<dt>${shown(f.label)}</dt><dd>${shown(f.value)}</dd>`)}</dl>` : nothing}
              ${v.backtest.reasons.length ? html`<ul class="reasons">${v.backtest.reasons.map((r) => html`<li>${shown(r)}</li>`)}</ul>` : nothing}
              <div class="meta">${v.backtest.source ? shown(`${v.backtest.source} · `) : ''}${when(v.backtest.at)}</div>
`
          : html`<span class="meta">No backtest yet.</span>`}
        ${v.backtest?.hasReport || canBacktest
          ? html`<div class="actions">
              ${v.backtest?.hasReport ? html`<vscode-button secondary data-testid="version-open-backtest" @click=${() => host.send(RunVersionActionCommand, { action: 'showBacktest' })}>Open Backtest Diff</vscode-button>` : nothing}
              ${canBacktest ? html`<vscode-button ?secondary=${Boolean(v.backtest)} data-testid="version-run-backtest" @click=${() => host.send(RunVersionActionCommand, { action: 'backtest' })}>${v.backtest ? 'Backtest Again' : 'Backtest'}</vscode-button>` : nothing}
            </div>`
          : nothing}
      </section>
      <section class=${v.gate ? '' : 'empty'} data-testid="version-gate">
        <h2>Gate decision</h2>
        ${v.gate
          ? html`<div><b class="verdict ${v.gate.decision}">${v.gate.decision === 'needs_human' ? 'needs a person' : v.gate.decision}</b> by ${shown(v.gate.by)} <span class="meta">${when(v.gate.at)}</span></div>
              ${v.gate.reasons.map((r) => html`<div class="reason"><span class=${r.passed === true ? 'ok' : r.passed === false ? 'fail' : 'warn'}>${r.passed === true ? '✓' : r.passed === false ? '✗' : '?'}</span><span><b>${shown(r.check)}</b>: ${shown(r.detail)}</span></div>`)}`
          : html`<span class="meta">Not gated yet.</span>`}
        ${!decided && v.parent ? html`<div class="actions"><vscode-button secondary data-testid="version-run-gate" @click=${() => host.send(RunVersionActionCommand, { action: 'gate' })}>${v.gate ? 'Gate Again' : 'Gate'}</vscode-button></div>` : nothing}
      </section>
      <section class=${v.metrics.length ? '' : 'empty'} data-testid="version-metrics">
        <h2>Metrics</h2>
        ${v.metrics.length
          ? html`<table>
              <tr><th>metric</th><th>${shown(v.id)}</th><th>${shown(v.parent ?? 'parent')}</th><th>Δ</th></tr>
              ${v.metrics.map((m) => html`<tr><td>${m.name === v.primaryMetric ? html`<b>${shown(m.name)}</b>` : shown(m.name)}</td><td>${num(m.value)}</td><td>${num(m.parent)}</td><td class=${m.delta === null || m.delta === 0 ? '' : m.delta > 0 ? 'up' : 'down'}>${signed(m.delta)}</td></tr>`)}
            </table>`
          : html`<span class="meta">Not evaluated yet.</span>`}
      </section>
      <section data-testid="version-history">
        <h2>History</h2>
        <ol>
          ${v.transitions.map((t) => html`<li><b>${shown(`${t.from ?? '∅'} → ${t.to}`)}</b> <span class="meta">${when(t.at)} by ${shown(t.by)}</span>${t.evidence.map((e) => html`<div class="meta">${shown(`${e.kind}: ${e.summary}`)}</div>`)}</li>`)}
        </ol>
      </section>
      ${!decided || v.state === 'promoted'
        ? html`<div class="actions">
            ${v.state === 'evaluated' ? html`<vscode-button data-testid="version-promote" @click=${() => host.send(RunVersionActionCommand, { action: 'promote' })}>Promote…</vscode-button>` : nothing}
            ${!decided && v.parent ? html`<vscode-button secondary data-testid="version-reject" @click=${() => host.send(RunVersionActionCommand, { action: 'reject' })}>Reject…</vscode-button>` : nothing}
            ${v.state === 'promoted' && v.parent && v.intervention ? html`<vscode-button secondary @click=${() => host.send(RunVersionActionCommand, { action: 'recordSkill' })}>Record Skill…</vscode-button>` : nothing}
          </div>`
        : nothing}
    `;
  }
}
