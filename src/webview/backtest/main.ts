import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import { css, html, nothing, svg, type TemplateResult } from 'lit';
import { customElement } from 'lit/decorators.js';
import { DidChangeResultNotification, GateActionCommand, OpenRolloutCommand, type BacktestView, type CheckRow, type GateView, type HowObtained, type HumanGateView, type Interval, type ResultState } from '../../viewer/backtest/protocol';
import { AppElement, appStyles, host } from '../shared/app';
import { actionLink } from '../shared/link';
import { markHidden, shown } from '../shared/hidden';


const num = (n: number | null | undefined, digits = 3) => (n === null || n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(digits));
const signed = (n: number | null | undefined, digits = 3) => (n === null || n === undefined || !Number.isFinite(n) ? '—' : `${n > 0 ? '+' : n < 0 ? '−' : '±'}${Math.abs(n).toFixed(digits)}`);
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const when = (iso: string) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : '');
/** Rollout text is untrusted: terminal escapes are dropped, long text is cut for display, hidden characters are marked. */
const ESCAPES = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007]*\u0007/g;
const cut = (s: string, max: number) => {
  const t = s.replace(ESCAPES, '');
  return t.length > max ? `${t.slice(0, max)}… (${t.length - max} more characters)` : t;
};
const clean = (s: string, max = 20_000) => shown(cut(s, max));
/** The same for an attribute (a tooltip): the marks as plain text. */
const cleanTitle = (s: string, max: number) => markHidden(cut(s, max));
const mark = (p: boolean | null) => (p === true ? html`<span class="ok" title="passes">✓</span>` : p === false ? html`<span class="fail" title="fails">✗</span>` : html`<span class="warn" title="a person must judge">?</span>`);

const CATEGORY: Record<string, string> = { validity: 'Validity (any failure rejects)', primary: 'Primary metric', target: 'Target: the success criterion', side_effect: 'Side effects', backtest: 'Backtest', evidence: 'Evidence' };

@customElement('evo-backtest-app')
export class BacktestApp extends AppElement<ResultState> {
  protected readonly stateNotification = DidChangeResultNotification;

  static override styles = [
    appStyles,
    css`
    :host { padding: 14px 20px 28px; max-width: 1100px; }
    header { display: flex; align-items: baseline; gap: 10px; flex-wrap: wrap; }
    h1 { font-size: 1.35em; font-weight: 600; margin: 0; }
    h2 { font-size: 0.85em; text-transform: uppercase; letter-spacing: 0.04em; color: var(--vscode-descriptionForeground); margin: 0 0 8px; font-weight: 600; }
    .meta { color: var(--vscode-descriptionForeground); font-size: 0.9em; overflow-wrap: anywhere; }
    code { font-family: var(--vscode-editor-font-family); }
    section { margin-top: 14px; padding: 10px 12px; border-radius: 4px; background: var(--vscode-editorWidget-background); border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, #8884)); }
    .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 0 14px; }
    .banner { margin-top: 14px; padding: 10px 14px; border-radius: 4px; border-left: 4px solid var(--vscode-descriptionForeground); background: var(--vscode-editorWidget-background); }
    .banner.pass, .banner.promote { border-left-color: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); }
    .banner.fail, .banner.reject { border-left-color: var(--vscode-testing-iconFailed, var(--vscode-charts-red)); }
    .banner.not_replayable, .banner.needs_human { border-left-color: var(--vscode-charts-yellow); }
    .verdict { font-size: 1.2em; font-weight: 700; letter-spacing: 0.03em; }
    .verdict.pass, .verdict.promote { color: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); }
    .verdict.fail, .verdict.reject { color: var(--vscode-testing-iconFailed, var(--vscode-charts-red)); }
    .verdict.not_replayable, .verdict.needs_human { color: var(--vscode-charts-yellow); }
    ul { margin: 6px 0 0; padding-left: 18px; }
    li { margin: 2px 0; overflow-wrap: anywhere; }
    .check { display: grid; grid-template-columns: 1.2em 1fr; gap: 2px 6px; padding: 2px 0; overflow-wrap: anywhere; }
    .ok { color: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); font-weight: 700; }
    .fail { color: var(--vscode-testing-iconFailed, var(--vscode-charts-red)); font-weight: 700; }
    .warn { color: var(--vscode-charts-yellow); font-weight: 700; }
    table { border-collapse: collapse; width: 100%; }
    td, th { text-align: left; padding: 3px 10px 3px 0; font-variant-numeric: tabular-nums; vertical-align: top; }
    th { color: var(--vscode-descriptionForeground); font-weight: normal; border-bottom: 1px solid var(--vscode-panel-border, #8884); }
    td.num, th.num { text-align: right; }
    .up { color: var(--vscode-charts-green); }
    .down { color: var(--vscode-charts-red); }
    .chip { display: inline-block; border-radius: 9px; padding: 0 7px; font-size: 0.85em; border: 1px solid currentColor; white-space: nowrap; }
    .chip.noise { color: var(--vscode-descriptionForeground); }
    .good, .chip.good { color: var(--vscode-charts-green); }
    .bad, .chip.bad { color: var(--vscode-charts-red); }
    .ci { white-space: nowrap; }
    .big { font-size: 1.3em; font-weight: 600; font-variant-numeric: tabular-nums; }
    dl { display: grid; grid-template-columns: max-content 1fr; gap: 3px 12px; margin: 0; }
    dt { color: var(--vscode-descriptionForeground); }
    dd { margin: 0; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
    a.rollout { cursor: pointer; color: var(--vscode-textLink-foreground); margin-right: 6px; font-variant-numeric: tabular-nums; }
    a.rollout:hover, a.rollout:focus { color: var(--vscode-textLink-activeForeground); text-decoration: underline; }
    .task { max-width: 38em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
    svg { display: block; width: 100%; max-width: 560px; height: auto; }
    .bar-before { fill: var(--vscode-descriptionForeground); opacity: 0.55; }
    .bar-after { fill: var(--vscode-charts-blue, var(--vscode-focusBorder)); }
    .axis { stroke: var(--vscode-panel-border, #8888); }
    .tick { fill: var(--vscode-descriptionForeground); font-size: 11px; font-family: var(--vscode-font-family); }
    .legend { display: flex; gap: 14px; font-size: 0.9em; color: var(--vscode-descriptionForeground); margin-top: 4px; }
    .swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: middle; }
    .swatch.before { background: var(--vscode-descriptionForeground); opacity: 0.55; }
    .swatch.after { background: var(--vscode-charts-blue, var(--vscode-focusBorder)); }
    pre { white-space: pre-wrap; overflow-wrap: anywhere; font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); margin: 0; max-height: 70vh; overflow: auto; }
    .actions { display: flex; gap: 8px; margin-top: 14px; flex-wrap: wrap; }
    .error { color: var(--vscode-errorForeground); overflow-wrap: anywhere; }
    .loading { display: flex; gap: 10px; align-items: center; }
    h3 { font-size: 0.9em; font-weight: 600; margin: 8px 0 2px; color: var(--vscode-descriptionForeground); }
    h3:first-of-type { margin-top: 0; }
    `,
  ];



  override render() {
    const v = this.view;
    if (v.status === 'loading') return html`<h1>${shown(v.title)}</h1><div class="loading" data-testid="result-loading"><vscode-progress-ring aria-label="Working"></vscode-progress-ring><span class="meta">${shown(v.progress)}</span></div>`;
    if (v.status === 'failed') return html`<h1>${shown(v.title)}</h1><p class="error" data-testid="result-error">${shown(v.error)}</p>`;
    if (v.kind === 'backtest') return this.backtest(v.backtest);
    if (v.kind === 'gate') return this.gate(v.gate);
    return this.humanGate(v.humanGate);
  }

  private openRollout(id: number, turn?: number) {
    host.send(OpenRolloutCommand, turn === undefined ? { rolloutId: id } : { rolloutId: id, turn });
  }

  /** An answer-in-context row's turn: opens the rollout in the Failure Explorer at the output that held the answer. */
  private turnLink(id: number, turn: number | null) {
    if (turn === null) return '—';
    const label = turn === 0 ? 'before 1' : String(turn);
    return actionLink({ label, title: `Open rollout ${id} at turn ${label} in the Failure Explorer`, testid: `turn-${id}`, className: 'rollout', onActivate: () => this.openRollout(id, turn) });
  }

  private rollout(id: number, label: string = String(id)) {
    return actionLink({ label, title: `Open rollout ${id} in the Failure Explorer`, testid: `rollout-${id}`, className: 'rollout', onActivate: () => this.openRollout(id) });
  }

  private checks(rows: CheckRow[]) {
    return rows.map((r) => html`<div class="check"><span>${mark(r.passed)}</span><span><b>${shown(r.check)}</b>: ${shown(r.detail)}</span></div>`);
  }

  private intervals(rows: Interval[], testid: string) {
    if (!rows.length) return nothing;
    return html`<table data-testid=${testid}>
      <tr><th>metric</th><th class="num">before</th><th class="num">after</th><th>Δ and its interval</th><th></th></tr>
      ${rows.map((r) => {
        if (r.n === 0) return html`<tr><td>${shown(r.name)}</td><td class="num">${num(r.before)}</td><td class="num">${num(r.after)}</td><td class="meta">no task has values on both sides</td><td><span class="chip noise">no data</span></td></tr>`;
        // Colour says good or bad news: a dead-group share going down is good.
        const good = r.direction === 'none' ? '' : (r.direction === 'up') === r.higherIsBetter ? 'good' : 'bad';
        const chip = r.withinNoise ? 'within noise' : `${r.direction} · ${good === 'good' ? 'better' : 'worse'}`;
        const deltaClass = r.withinNoise || r.delta === null || r.delta === 0 ? '' : (r.delta > 0) === r.higherIsBetter ? 'good' : 'bad';
        return html`<tr>
          <td>${shown(r.name)}</td><td class="num">${num(r.before)}</td><td class="num">${num(r.after)}</td>
          <td><span class=${deltaClass}>${signed(r.delta)}</span> <span class="meta ci">[${signed(r.ci[0])}, ${signed(r.ci[1])}] ${Math.round(r.confidence * 100)}% · ${r.n} tasks${r.pValue !== null ? ` · p=${r.pValue.toFixed(3)}` : ''}</span></td>
          <td><span class="chip ${r.withinNoise ? 'noise' : good}" title=${markHidden(r.label)}>${chip}</span></td>
        </tr>`;
      })}
    </table>`;
  }

  private histogram(h: NonNullable<BacktestView['stats']>['histogram']): TemplateResult {
    const W = 360;
    const H = 170;
    const pad = 24;
    const bw = (W - 2 * pad) / h.before.length;
    const y = (n: number) => ((H - pad - 6) * n) / h.max;
    const edge = (i: number) => h.edges[0] + ((h.edges[1] - h.edges[0]) * i) / h.before.length;
    return html`<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="Score histogram before and after" data-testid="result-histogram">
        ${h.before.map((n, i) => svg`<rect class="bar-before" x=${pad + i * bw + 2} y=${H - pad - y(n)} width=${bw / 2 - 2} height=${y(n)}><title>before: ${n} rollouts in [${num(edge(i), 2)}, ${num(edge(i + 1), 2)})</title></rect>`)}
        ${h.after.map((n, i) => svg`<rect class="bar-after" x=${pad + i * bw + bw / 2} y=${H - pad - y(n)} width=${bw / 2 - 2} height=${y(n)}><title>after: ${n} rollouts in [${num(edge(i), 2)}, ${num(edge(i + 1), 2)})</title></rect>`)}
        <line class="axis" x1=${pad} y1=${H - pad} x2=${W - pad} y2=${H - pad}></line>
        ${[0, 5, 10].map((i) => svg`<text class="tick" x=${pad + i * bw} y=${H - 6} text-anchor=${i === 0 ? 'start' : i === 10 ? 'end' : 'middle'}>${num(edge(i), 2)}</text>`)}
        <text class="tick" x="2" y="12">${h.max} rollouts</text>
      </svg>
      <div class="legend"><span><span class="swatch before"></span>before (mean ${num(h.meanBefore)})</span><span><span class="swatch after"></span>after (mean ${num(h.meanAfter)})</span></div>`;
  }

  private backtest(b: BacktestView) {
    const s = b.stats;
    const verdict = b.verdict === 'not_replayable' ? 'NOT REPLAYABLE' : b.verdict.toUpperCase();
    return html`
      <header>
        <h1 data-testid="result-title">Backtest ${shown(b.version)} <span class="meta">vs</span> ${shown(b.against)}</h1>
        <span class="meta"><code>${b.commits.version.slice(0, 12)}</code> vs <code>${b.commits.against.slice(0, 12)}</code> · ${shown(b.kinds.join(', ')) || 'nothing changed'} · ${b.wallSeconds.toFixed(1)} s</span>
      </header>
      <div class="banner ${b.verdict}" data-testid="result-verdict">
        <span class="verdict ${b.verdict}">${verdict}</span>
        ${s ? html`<span class="meta"> · ${s.rollouts} rollouts in ${s.groups} groups over ${s.tasks} tasks</span>` : nothing}
        <ul data-testid="result-reasons">${b.reasons.map((r) => html`<li>${shown(r)}</li>`)}</ul>
        ${b.invariants.length ? html`<div data-testid="result-invariants">${this.checks(b.invariants)}</div>` : nothing}
      </div>
      <section class="meta">changed: ${b.changed.map((c, i) => html`${i ? ', ' : ''}<code>${shown(c)}</code>`)}${b.notReplayable ? html`<div>not replayable offline (${shown(b.notReplayable.paths.join(', '))}): ${shown(b.notReplayable.needs)}</div>` : nothing}</section>
      ${s
        ? html`
            <section><h2>Before / after (paired by task)</h2>${this.intervals(s.intervals, 'result-intervals')}</section>
            <div class="grid">
              <section><h2>Score histogram</h2>${this.histogram(s.histogram)}</section>
              <section data-testid="result-dead">
                <h2>Dead groups (zero reward variance)</h2>
                <div class="big">${s.deadGroups.before} → ${s.deadGroups.after} <span class="meta">of ${s.deadGroups.groups}</span></div>
                <dl>
                  <dt>revived</dt><dd class=${s.deadGroups.revived ? 'up' : ''}>${s.deadGroups.revived} (${pct(s.deadGroups.revivedShare)} of the dead)</dd>
                  <dt>newly dead</dt><dd class=${s.deadGroups.killed ? 'down' : ''}>${s.deadGroups.killed}</dd>
                  <dt>effective data</dt><dd>${pct(s.effectiveData.before)} → ${pct(s.effectiveData.after)}</dd>
                </dl>
              </section>
              <section data-testid="result-ordering">
                <h2>Ordering violations</h2>
                <div class="big ${s.ordering.newViolations ? 'down' : ''}">${s.ordering.newViolations} new</div>
                <div class="meta">${s.ordering.violations} of ${s.ordering.pairs} ordered pairs (less correct above more correct); ${s.ordering.violationsBefore} before</div>
                ${s.ordering.examples.length
                  ? html`<table><tr><th>outscores</th><th>the more correct</th><th>group</th></tr>
                      ${s.ordering.examples.slice(0, 8).map((e) => html`<tr><td>${this.rollout(e.lower)}</td><td>${this.rollout(e.higher)}</td><td class="meta task" title=${markHidden(e.group)}>${shown(e.group)}</td></tr>`)}</table>`
                  : nothing}
              </section>
              <section data-testid="result-successes">
                <h2>Successful rollouts (${s.successes.total})</h2>
                <dl>
                  <dt>newly penalized</dt><dd class=${s.successes.penalized ? 'down' : ''}>${s.successes.penalized}</dd>
                  <dt>newly truncated</dt><dd class=${s.successes.truncated ? 'down' : ''}>${s.successes.truncated}</dd>
                  <dt>newly filtered</dt><dd class=${s.successes.filtered ? 'down' : ''}>${s.successes.filtered}</dd>
                  <dt>trajectories dropped</dt><dd>${s.filter.trajectoriesDroppedBefore} → ${s.filter.trajectoriesDroppedAfter}</dd>
                  <dt>whole groups dropped</dt><dd>${s.filter.groupsDroppedBefore} → ${s.filter.groupsDroppedAfter}</dd>
                  <dt>reward errors</dt><dd class=${s.errors.after ? 'down' : ''}>before ${s.errors.before}, after ${s.errors.after}</dd>
                </dl>
                ${s.errors.examples.length ? html`<ul>${s.errors.examples.slice(0, 3).map((e) => html`<li>${this.rollout(e.id)} <span class="meta">${e.side}:</span> ${clean(e.error, 300)}</li>`)}</ul>` : nothing}
              </section>
            </div>
            <section data-testid="result-modes">
              <h2>Per failure mode (mean score)</h2>
              <table>
                <tr><th>failure mode</th><th class="num">rollouts</th><th class="num">before</th><th class="num">after</th><th class="num">Δ</th></tr>
                ${s.failureModes.map((m) => html`<tr><td>${shown(m.mode)}</td><td class="num">${m.n}</td><td class="num">${num(m.before)}</td><td class="num">${num(m.after)}</td><td class="num ${m.delta === null || Math.abs(m.delta) < 1e-9 ? '' : m.delta > 0 ? 'up' : 'down'}">${signed(m.delta)}</td></tr>`)}
              </table>
            </section>
            <section data-testid="result-flips">
              <h2>Tasks whose mean score moved (${s.flips.length >= 50 ? '50+' : s.flips.length}${s.flips.length > 20 ? ', the 20 largest moves' : ''})</h2>
              ${s.flips.length
                ? html`<table>
                    <tr><th>task</th><th class="num">before</th><th class="num">after</th><th>rollouts (open in the Failure Explorer)</th></tr>
                    ${s.flips.slice(0, 20).map((f) => html`<tr><td class="task" title=${cleanTitle(f.task, 2000)}>${clean(f.task, 200)}</td><td class="num">${num(f.before)}</td><td class="num ${f.after > f.before ? 'up' : 'down'}">${num(f.after)}</td><td>${f.rollouts.slice(0, 8).map((id) => this.rollout(id))}</td></tr>`)}
                  </table>`
                : html`<span class="meta">No task's mean score moved.</span>`}
            </section>`
        : nothing}
      ${b.metricReplays.length
        ? html`<section data-testid="result-metric-replays"><h2>Metric replays over earlier versions</h2>
            ${b.metricReplays.map((m) => html`<div class="check"><span>${mark(m.separates)}</span><span><b>${shown(m.metric)}</b> <span class="meta">(${shown(m.file)})</span>: ${shown(m.detail)}<div class="meta">${shown(m.perVersion.map((p) => `${p.version} [${p.status}] ${num(p.value)}`).join(' · '))}</div></span></div>`)}
          </section>`
        : nothing}
    `;
  }

  private gate(g: GateView) {
    const label = g.decision === 'promote' ? 'PROMOTE' : g.decision === 'reject' ? 'REJECT' : 'NEEDS A PERSON';
    const decided = g.state === 'promoted' || g.state === 'rejected';
    const failed = g.checks.filter((c) => c.passed === false).length;
    const open = g.checks.filter((c) => c.passed === null).length;
    const categories = [...new Set(g.checks.map((c) => c.category ?? ''))];
    return html`
      <header>
        <h1 data-testid="result-title">Gate ${shown(g.version)}${g.baseline ? html` <span class="meta">vs</span> ${shown(g.baseline)}` : nothing}</h1>
        <span class="meta">${when(g.decidedAt)}${g.evalRollouts ? shown(` · eval rollouts ${g.evalRollouts.version} vs ${g.evalRollouts.baseline}${g.evalRollouts.split ? ` (${g.evalRollouts.split})` : ''}`) : ''}</span>
      </header>
      <div class="banner ${g.decision}" data-testid="gate-decision">
        <span class="verdict ${g.decision}">${label}</span>
        <span class="meta"> · ${failed ? `${failed} check(s) fail` : open ? `${open} check(s) a person must judge` : `all ${g.checks.length} checks pass`}${decided ? shown(` · ${g.version} is now ${g.state}`) : ''}</span>
      </div>
      <section data-testid="gate-checks">
        <h2>Every reason</h2>
        ${categories.map((cat) => html`<h3>${CATEGORY[cat] ?? cat}</h3>${this.checks(g.checks.filter((c) => (c.category ?? '') === cat))}`)}
      </section>
      ${this.howObtained(g.howObtained)}
      ${g.intervals.length ? html`<section><h2>Comparisons (paired by task)</h2>${this.intervals(g.intervals, 'gate-intervals')}</section>` : nothing}
      <div class="actions">
        ${!decided
          ? html`<vscode-button data-testid="gate-promote" ?secondary=${g.decision !== 'promote'} @click=${() => host.send(GateActionCommand, { action: 'promote' })}>${g.decision === 'promote' ? 'Promote' : 'Promote Anyway…'}</vscode-button>
              <vscode-button data-testid="gate-reject" ?secondary=${g.decision !== 'reject'} @click=${() => host.send(GateActionCommand, { action: 'reject' })}>Reject…</vscode-button>`
          : nothing}
        <vscode-button secondary data-testid="gate-evidence" @click=${() => host.send(GateActionCommand, { action: 'evidence' })}>Show Version Evidence</vscode-button>
      </div>
    `;
  }

  /** How the gain was obtained: answers shown before written (channel, turn), behaviour concentrated in the flips, an empty diff that moved. */
  private howObtained(o: HowObtained | undefined) {
    if (!o || (!o.answerInContext.length && !o.flips && !o.emptyDiffMoved)) return nothing;
    const f = o.flips;
    return html`<section data-testid="gate-how">
      <h2>How the gain was obtained</h2>
      ${o.emptyDiffMoved ? html`<div class="check" data-testid="gate-empty-diff"><span>${mark(null)}</span><span><b>Nothing changed, yet it moved</b>: ${shown(o.emptyDiffMoved)}</span></div>` : nothing}
      ${o.answerInContext.length
        ? html`<h3>Shown the answer before writing it</h3>
            <table data-testid="gate-answer-in-context"><tr><th>rollout</th><th>task</th><th class="num">turn</th><th>channel (the command whose output held the answer)</th></tr>
              ${o.answerInContext.map((l) => html`<tr><td>${this.rollout(l.rollout)}</td><td class="task" title=${cleanTitle(l.task, 500)}>${clean(l.task, 200)}</td><td class="num">${this.turnLink(l.rollout, l.turn)}</td><td><code>${clean(l.channel, 400)}</code></td></tr>`)}
            </table>`
        : nothing}
      ${f
        ? html`<h3>The ${f.flipped} task(s) flipped fail → pass</h3>
            <div class="meta">${f.trajectories} credited trajectories; ${f.shown} shown their answer before writing it; compared with ${f.baseline} baseline and ${f.unflipped} unflipped trajectories</div>
            ${f.concentrated.length
              ? html`<table data-testid="gate-flip-behaviour"><tr><th>behaviour concentrated in the flips</th><th class="num">flips</th><th class="num">baseline</th><th class="num">unflipped</th></tr>
                  ${f.concentrated.map((b) => html`<tr><td><code>${clean(b.behaviour, 300)}</code></td><td class="num">${b.flips} of ${f.trajectories}</td><td class="num">${b.baseline} of ${f.baseline}</td><td class="num">${b.unflipped} of ${f.unflipped}</td></tr>`)}
                </table>`
              : html`<div class="meta">no behaviour concentrated in them that the baseline lacks</div>`}`
        : nothing}
    </section>`;
  }

  private humanGate(g: HumanGateView) {
    return html`
      <header>
        <h1 data-testid="result-title">${shown(`${g.gate} gate${g.version ? ` of ${g.version}` : ''}`)}</h1>
        <span class="meta">asked ${when(g.askedAt)} · ${shown(g.id)}</span>
      </header>
      <div class="banner ${g.answer ? 'pass' : 'needs_human'}" data-testid="human-summary">
        <span class="verdict ${g.answer ? 'pass' : 'needs_human'}">${g.answer ? shown(`ANSWERED: ${g.answer}`) : 'WAITING FOR AN ANSWER'}</span>
        <div>${clean(g.summary, 2000)}</div>
        ${g.answer ? nothing : html`<div class="meta">Answer with APPROVE, REVISE… or ABORT in the notification, or run “EvoTrainer: Answer Pending Gate”.</div>`}
      </div>
      <section><h2>Evidence</h2><pre data-testid="human-evidence">${clean(g.evidence)}</pre></section>
    `;
  }
}
