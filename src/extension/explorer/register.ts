import * as vscode from 'vscode';
import type { EditorSession } from '../session';
import { explorerWebview } from './webview';

/** "EvoTrainer: Open Failure Explorer" (the Findings view and the curves pass a filter). */
export function registerExplorer(session: EditorSession): void {
  session.context.subscriptions.push(vscode.commands.registerCommand('evotrainer.openFailureExplorer', (args?: unknown) => session.webviews.show(explorerWebview, args)));
}
