import * as vscode from 'vscode';
import { registerBacktest } from './backtest/register';
import { registerJobs } from './jobs/register';
import { registerVersioning } from './views/register';
import { createSession, type EditorSession } from './session';
import { unsupportedPlatform } from './platform';
import { registerWalkthrough } from './walkthrough';

import { registerCurves } from './curves/register';
import { registerDoctor } from './doctor/register';
import { registerExplorer } from './explorer/register';
import { registerHealth } from './health/register';
import { registerJudge } from './judge/register';
import { registerLanguageClient } from './language/register';

/** The editor's features, each in its folder with its `register`. */
const FEATURES: ((session: EditorSession) => void)[] = [
  // Versions, Findings, Skills, the version commands, the lineage graph and evidence panels.
  registerVersioning,
  // Runs (jobs per cluster profile), the job commands and the status-bar item.
  registerJobs,
  // Backtest, gate and evolve commands (and the "Backtest this change" lens's command).
  registerBacktest,
  registerHealth,
  registerExplorer,
  registerCurves,
  registerDoctor,
  registerJudge,
  registerWalkthrough,
  // The language server for harness files, started when the first one opens.
  registerLanguageClient,
];

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

  // Each feature registers its commands, views and panels; its engine code loads on first use.
  for (const register of FEATURES) register(session);
  context.subscriptions.push(vscode.commands.registerCommand('evotrainer.refreshViews', () => session.refresh()));
  return { output };
}

export function deactivate() {
  // Disposables registered on the context are released by the editor.
}
