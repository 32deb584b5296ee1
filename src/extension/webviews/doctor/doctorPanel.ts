import * as vscode from 'vscode';
import { formatDoctorReport, runDoctor, type DoctorReport } from '../../../core/doctor';
import type { WebviewFeature, WebviewPanelContext, WebviewProvider } from '../host';
import { DidChangeStateNotification, DoctorMethods, type DoctorState } from '../../../viewer/doctor/protocol';

/**
 * "EvoTrainer: Check Environment": the report in the output channel and in a webview.
 * Opening it runs the check; shown again after another tab, it shows the last report.
 */
export const doctorFeature: WebviewFeature<DoctorState, void, DoctorReport | null> = {
  stateNotification: DidChangeStateNotification,
  initialState: () => ({ status: 'running', report: null, error: null }),
  create: (p) => new DoctorPanel(p),
};

class DoctorPanel implements WebviewProvider<void, DoctorReport | null> {
  private report: DoctorReport | null = null;

  constructor(private readonly p: WebviewPanelContext<DoctorState>) {
    p.controller.serve(DoctorMethods, {
      rerun: () => void this.check(),
      copyReport: async ({ format }) => {
        if (!this.report) return;
        await vscode.env.clipboard.writeText(format === 'json' ? JSON.stringify(this.report, null, 2) : formatDoctorReport(this.report));
        void vscode.window.showInformationMessage(`EvoTrainer: environment report copied as ${format.toUpperCase()}.`);
      },
    });
  }

  show(): Promise<DoctorReport | null> {
    return this.check();
  }

  private async check(): Promise<DoctorReport | null> {
    const { controller, session } = this.p;
    const output = session.output;
    controller.setState({ status: 'running', report: this.report, error: null });
    try {
      const python = vscode.workspace.getConfiguration('evotrainer').get<string>('pythonPath') || 'python3';
      const report = await runDoctor({ python });
      this.report = report;
      output.info(`Environment check\n${formatDoctorReport(report)}`);
      if (!report.ok) output.show(true);
      controller.setState({ status: 'done', report, error: null });
      return report;
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      output.error(`Environment check could not run: ${error}`);
      controller.setState({ status: 'failed', report: this.report, error });
      return null;
    }
  }
}
