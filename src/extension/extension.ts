import * as path from 'node:path';
import * as vscode from 'vscode';
import { registerBacktest } from './backtest/register';
import { registerJobs } from './jobs/register';
import { registerVersioning } from './views/register';
import { createSession } from './session';
import { doctorWebview } from './doctor/webview';
import { curvesWebview } from './curves/webview';
import { explorerWebview } from './explorer/webview';
import { healthWebview } from './health/webview';
import { unsupportedPlatform } from './platform';
import { markStepDone, openWalkthrough } from './walkthrough';

/**
 * Activation stays light: it registers commands and views and nothing else. The engine's
 * heavy parts (the DuckDB store, the language client, webview code) load on first use.
 */
export function activate(context: vscode.ExtensionContext) {
  const refusal = unsupportedPlatform(process.platform);
  if (refusal) {
    void vscode.window.showErrorMessage(refusal);
    return undefined;
  }
  const output = vscode.window.createOutputChannel('EvoTrainer', { log: true });
  context.subscriptions.push(output);

  const session = createSession(context, output);

  // Versions, Findings, Skills and the version commands; their engine loads on first use.
  registerVersioning(session);
  // Runs (jobs per cluster profile), the job commands and the status-bar item.
  registerJobs(session);
  // Backtest, gate and evolve commands (and the "Backtest this change" lens's command).
  registerBacktest(session);

  const { webviews } = session;
  context.subscriptions.push(
    vscode.commands.registerCommand('evotrainer.checkEnvironment', () => webviews.show(doctorWebview, undefined)),
    vscode.commands.registerCommand('evotrainer.showHealthReport', () => webviews.show(healthWebview, session.selectedVersion())),
    vscode.commands.registerCommand('evotrainer.openFailureExplorer', (args?: unknown) => webviews.show(explorerWebview, args)),
    vscode.commands.registerCommand('evotrainer.showTrainingCurves', (args?: unknown) => webviews.show(curvesWebview, args)),
    vscode.commands.registerCommand('evotrainer.judgeRollouts', () => session.engine().judgeRollouts(context, output)),
    vscode.commands.registerCommand('evotrainer.setLlmApiKey', () => session.engine().setLlmApiKey(context)),
    vscode.commands.registerCommand('evotrainer.refreshViews', () => session.refresh()),
    vscode.commands.registerCommand('evotrainer.openWalkthrough', async () => {
      await openWalkthrough(context);
      // Its first step: a harness is open. Set once the walkthrough is there: the editor
      // completes a step on a context key that changes, not on one already set.
      if (session.root()) markStepDone('harness');
    }),
  );

  startLanguageClientWhenNeeded(context, output);
  return { output };
}

/** Rule, metric, skill, reward and filter files (src/extension/client.ts selects the same). */
const HARNESS_FILE = /\/(diagnostics\/(rules\/[^/]+\.ya?ml|metrics\/[^/]+\.(sql|py))|skills\/[^/]+\.md|(reward|filters)\/.+\.py)$/i;

/** The language server serves harness files; start it when the first one opens. */
function startLanguageClientWhenNeeded(context: vscode.ExtensionContext, output: vscode.LogOutputChannel) {
  let started = false;
  const maybeStart = (doc: vscode.TextDocument) => {
    if (started || !(doc.languageId === 'evotrainer-manifest' || HARNESS_FILE.test(doc.uri.path))) return;
    started = true;
    // A separate bundle, required only now, so activation never pays for it.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const client = require(path.join(__dirname, 'client.js')) as typeof import('./client');
    client.startClient(context).catch((err: unknown) => output.error(`Language server failed to start: ${String(err)}`));
  };
  vscode.workspace.textDocuments.forEach(maybeStart);
  context.subscriptions.push(vscode.workspace.onDidOpenTextDocument(maybeStart));
}

export function deactivate() {
  // Disposables registered on the context are released by the editor.
}
