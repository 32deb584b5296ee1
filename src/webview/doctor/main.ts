import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import '@vscode-elements/elements/dist/vscode-icon/index.js';
import { css, html, nothing } from 'lit';
import { customElement } from 'lit/decorators.js';
import {
  CopyReportCommand,
  DidChangeStateNotification,
  RerunCommand,
  type CheckStatus,
  type DoctorCheck,
  type DoctorState,
} from '../../viewer/doctor/protocol';
import { AppElement, appStyles, host } from '../shared/app';


const ICON: Record<CheckStatus, string> = { ok: 'pass-filled', missing: 'error', error: 'warning', skipped: 'circle-slash' };
const LABEL: Record<CheckStatus, string> = { ok: 'OK', missing: 'Missing', error: 'Problem', skipped: 'Skipped' };

@customElement('evo-doctor-app')
export class DoctorApp extends AppElement<DoctorState> {
  protected readonly stateNotification = DidChangeStateNotification;

  static override styles = [
    appStyles,
    css`
    :host { padding: 16px 24px; max-width: 980px; }
    header { display: flex; align-items: center; gap: 12px; flex-wrap: wrap; margin-bottom: 12px; }
    h1 { font-size: 1.4em; font-weight: 600; margin: 0; flex: 1 1 auto; }
    .verdict { display: flex; align-items: center; gap: 8px; padding: 8px 12px; border-radius: 4px; margin-bottom: 16px;
      border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, transparent)); background: var(--vscode-editorWidget-background); }
    .verdict.ready vscode-icon { color: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); }
    .verdict.not-ready vscode-icon { color: var(--vscode-errorForeground); }
    .verdict.attention vscode-icon { color: var(--vscode-editorWarning-foreground, var(--vscode-charts-yellow)); }
    .meta { color: var(--vscode-descriptionForeground); font-size: 0.9em; }
    table { width: 100%; border-collapse: collapse; }
    th { text-align: left; font-weight: 600; color: var(--vscode-descriptionForeground); padding: 6px 8px; border-bottom: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, #8884)); }
    td { padding: 8px; vertical-align: top; border-bottom: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, #8882)); }
    td.status { white-space: nowrap; width: 1%; }
    .status-ok { color: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); }
    .status-missing { color: var(--vscode-errorForeground); }
    .status-error { color: var(--vscode-editorWarning-foreground, var(--vscode-charts-yellow)); }
    .status-skipped { color: var(--vscode-descriptionForeground); }
    .status vscode-icon { vertical-align: middle; margin-right: 4px; color: inherit; }
    .name { font-weight: 600; }
    .optional { color: var(--vscode-descriptionForeground); font-weight: normal; font-size: 0.9em; }
    .purpose { color: var(--vscode-descriptionForeground); font-size: 0.9em; margin-top: 2px; }
    .fix { margin-top: 4px; }
    code { font-family: var(--vscode-editor-font-family); font-size: 0.95em; background: var(--vscode-textCodeBlock-background); padding: 1px 4px; border-radius: 3px; overflow-wrap: anywhere; }
    .error { color: var(--vscode-errorForeground); }
    `,
  ];



  override render() {
    const { report, status, error } = this.view;
    return html`
      <header>
        <h1>EvoTrainer environment</h1>
        ${status === 'running' ? html`<vscode-progress-ring data-testid="doctor-running" aria-label="Checking"></vscode-progress-ring>` : nothing}
        <vscode-button data-testid="doctor-rerun" icon="refresh" ?disabled=${status === 'running'} @click=${() => host.send(RerunCommand, undefined)}>Check again</vscode-button>
        <vscode-button secondary icon="copy" ?disabled=${!report} @click=${() => host.send(CopyReportCommand, { format: 'json' })}>Copy JSON</vscode-button>
      </header>
      ${error ? html`<p class="error" data-testid="doctor-error">The check could not run: ${error}</p>` : nothing}
      ${report
        ? html`
            <div class="verdict ${report.level}" data-testid="doctor-verdict" data-ok=${String(report.ok)} data-level=${report.level}>
              <vscode-icon name=${report.level === 'ready' ? 'pass-filled' : report.level === 'attention' ? 'warning' : 'error'}></vscode-icon>
              <span>${report.verdict}</span>
              <span class="meta">${report.summary.ok} ok · ${report.summary.missing} missing · ${report.summary.error} problems · ${report.summary.skipped} skipped</span>
            </div>
            <table data-testid="doctor-checks">
              <thead><tr><th>Status</th><th>Component</th><th>Found</th></tr></thead>
              <tbody>${report.checks.map((c) => this.row(c))}</tbody>
            </table>
            <p class="meta">${report.host} · ${report.platform} · node ${report.node} · checked ${new Date(report.generatedAt).toLocaleString()}</p>`
        : status === 'running'
          ? html`<p class="meta">Checking git, Python, SSH, Slurm and the rollout store…</p>`
          : nothing}
    `;
  }

  private row(c: DoctorCheck) {
    return html`<tr data-testid="check-${c.id}" data-status=${c.status}>
      <td class="status status-${c.status}"><vscode-icon name=${ICON[c.status]}></vscode-icon>${LABEL[c.status]}</td>
      <td>
        <div class="name">${c.label}${c.required ? nothing : html` <span class="optional">(optional)</span>`}</div>
        <div class="purpose">${c.purpose}</div>
      </td>
      <td>
        <div>${c.status === 'ok' ? html`<code>${c.version ?? ''}</code>` : c.detail}</div>
        ${c.status !== 'ok' && c.fix ? html`<div class="fix">→ <code>${c.fix}</code></div>` : nothing}
      </td>
    </tr>`;
  }
}
