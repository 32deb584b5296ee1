import * as vscode from 'vscode';
import type { EditorSession } from '../session';
import { doctorWebview } from './webview';

/** "EvoTrainer: Check Environment". */
export function registerDoctor(session: EditorSession): void {
  session.context.subscriptions.push(vscode.commands.registerCommand('evotrainer.checkEnvironment', () => session.webviews.show(doctorWebview, undefined)));
}
