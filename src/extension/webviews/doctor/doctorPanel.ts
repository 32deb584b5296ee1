import * as vscode from 'vscode';
import { formatDoctorReport, runDoctor, type DoctorReport } from '../../../core/doctor';
import { WebviewController } from '../webviewController';
import { DidChangeStateNotification, DoctorMethods, type DoctorState } from '../../../viewer/doctor/protocol';

/** "EvoTrainer: Check Environment": the report in the output channel and in a webview. */
export class DoctorPanel {
  private static current: DoctorPanel | undefined;
  private report: DoctorReport | null = null;

  static async show(context: vscode.ExtensionContext, output: vscode.LogOutputChannel): Promise<DoctorReport | null> {
    if (!DoctorPanel.current) {
      const panel = vscode.window.createWebviewPanel('evotrainer.doctor', 'EvoTrainer: Environment', vscode.ViewColumn.Active, {
        retainContextWhenHidden: false,
      });
      panel.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'evotrainer.svg');
      DoctorPanel.current = new DoctorPanel(
        new WebviewController<DoctorState>(panel, context.extensionUri, {
          app: 'doctor',
          title: 'EvoTrainer: Environment',
          initialState: { status: 'running', report: null, error: null },
          log: output,
        }),
        output,
      );
    } else {
      DoctorPanel.current.controller.panel.reveal();
    }
    return DoctorPanel.current.check();
  }

  private constructor(
    private readonly controller: WebviewController<DoctorState>,
    private readonly output: vscode.LogOutputChannel,
  ) {
    controller.onDidDispose(() => {
      if (DoctorPanel.current === this) DoctorPanel.current = undefined;
    });
    controller.serve(DoctorMethods, {
      rerun: () => void this.check(),
      copyReport: async ({ format }) => {
        if (!this.report) return;
        await vscode.env.clipboard.writeText(format === 'json' ? JSON.stringify(this.report, null, 2) : formatDoctorReport(this.report));
        void vscode.window.showInformationMessage(`EvoTrainer: environment report copied as ${format.toUpperCase()}.`);
      },
    });
  }

  private async check(): Promise<DoctorReport | null> {
    this.controller.notify(DidChangeStateNotification, { status: 'running', report: this.report, error: null });
    try {
      const python = vscode.workspace.getConfiguration('evotrainer').get<string>('pythonPath') || 'python3';
      const report = await runDoctor({ python });
      this.report = report;
      this.output.info(`Environment check\n${formatDoctorReport(report)}`);
      if (!report.ok) this.output.show(true);
      this.controller.notify(DidChangeStateNotification, { status: 'done', report, error: null });
      return report;
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      this.output.error(`Environment check could not run: ${error}`);
      this.controller.notify(DidChangeStateNotification, { status: 'failed', report: this.report, error });
      return null;
    }
  }
}
