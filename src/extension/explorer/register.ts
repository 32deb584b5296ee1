import * as vscode from 'vscode';
import type { OpenRolloutParams } from '../../viewer/explorer/protocol';
import type { EditorSession } from '../session';
import { explorerWebview } from './webview';

/** "EvoTrainer: Open Failure Explorer" (the Findings view and the curves pass a filter). */
export function registerExplorer(session: EditorSession): void {
  session.context.subscriptions.push(vscode.commands.registerCommand('evotrainer.openFailureExplorer', (args?: unknown) => session.webviews.show(explorerWebview, args)));
}

/** A page's link to one rollout (a flip, a leak the health report saw): the Failure Explorer opened at it, at one of its turns when given. */
export async function openRolloutInExplorer({ rolloutId, turn }: OpenRolloutParams): Promise<void> {
  await vscode.commands.executeCommand('evotrainer.openFailureExplorer', { rolloutId, ...(turn === undefined ? {} : { turn }) });
}
