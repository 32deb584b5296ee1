import * as vscode from 'vscode';
import type { EditorSession } from '../session';
import { healthWebview } from './webview';

/** "EvoTrainer: Show Health Report", scoped as the Findings view is unless the user picks another scope. */
export function registerHealth(session: EditorSession): void {
  session.context.subscriptions.push(vscode.commands.registerCommand('evotrainer.showHealthReport', () => session.webviews.show(healthWebview, session.selectedVersion())));
}
