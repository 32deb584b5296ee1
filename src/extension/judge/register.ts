import * as vscode from 'vscode';
import type { EditorSession } from '../session';

/** "EvoTrainer: Judge Rollouts…" and "Set LLM API Key"; the judge runs in the engine bundle. */
export function registerJudge(session: EditorSession): void {
  const { context, output } = session;
  context.subscriptions.push(
    vscode.commands.registerCommand('evotrainer.judgeRollouts', () => session.engine().judgeRollouts(context, output)),
    vscode.commands.registerCommand('evotrainer.setLlmApiKey', () => session.engine().setLlmApiKey(context)),
  );
}
