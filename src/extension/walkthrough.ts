import * as vscode from 'vscode';
import type { EditorSession } from './session';

/**
 * The "Get started with EvoTrainer" walkthrough (package.json `walkthroughs`). A step
 * completes when the user has done it: the command succeeded, which sets its context key.
 */
export const WALKTHROUGH_ID = 'evotrainer.start';

export type WalkthroughStep = 'harness' | 'imported' | 'version' | 'backtested' | 'gated';

export function markStepDone(step: WalkthroughStep): void {
  void vscode.commands.executeCommand('setContext', `evotrainer.walkthrough.${step}`, true);
}

/** Passes a command's result on, marking the step done when there is one (undefined: cancelled or failed). */
export function whenDone<T>(step: WalkthroughStep): (result: T) => T {
  return (result) => {
    if (result !== undefined && result !== null) markStepDone(step);
    return result;
  };
}

export function openWalkthrough(context: vscode.ExtensionContext): Thenable<unknown> {
  return vscode.commands.executeCommand('workbench.action.openWalkthrough', `${context.extension.id}#${WALKTHROUGH_ID}`, false);
}

/** "EvoTrainer: Get Started". */
export function registerWalkthrough(session: EditorSession): void {
  session.context.subscriptions.push(
    vscode.commands.registerCommand('evotrainer.openWalkthrough', async () => {
      await openWalkthrough(session.context);
      // Its first step: a harness is open. Set once the walkthrough is there: the editor
      // completes a step on a context key that changes, not on one already set.
      if (session.root()) markStepDone('harness');
    }),
  );
}
