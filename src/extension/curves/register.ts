import * as vscode from 'vscode';
import type { EditorSession } from '../session';
import { curvesWebview } from './webview';

/** "EvoTrainer: Show Training Curves" ("Show Job Curves" is the Runs view's: src/extension/jobs). */
export function registerCurves(session: EditorSession): void {
  session.context.subscriptions.push(vscode.commands.registerCommand('evotrainer.showTrainingCurves', (args?: unknown) => session.webviews.show(curvesWebview, args)));
}
