import * as vscode from 'vscode';
import { whenDone } from '../walkthrough';
import type { EditorSession } from '../session';

/** A command's version argument: a Versions tree node (context menu), an id (palette, tests), or nothing. */
export function versionArg(arg: unknown): string | undefined {
  if (typeof arg === 'string' && /^v\d+$/.test(arg)) return arg;
  if (arg && typeof arg === 'object' && 'id' in arg && typeof (arg as { id: unknown }).id === 'string' && /^v\d+$/.test((arg as { id: string }).id)) return (arg as { id: string }).id;
  return undefined;
}

/** The lens's argument: {file, function}. */
function lensArg(arg: unknown): { file: string; function?: string } | undefined {
  if (!arg || typeof arg !== 'object' || !('file' in arg) || typeof (arg as { file: unknown }).file !== 'string') return undefined;
  const fn = (arg as { function?: unknown }).function;
  return { file: (arg as { file: string }).file, ...(typeof fn === 'string' ? { function: fn } : {}) };
}

/**
 * Backtest, gate and evolve commands. Registering costs nothing: the engine (and the
 * webview code) loads when one runs.
 */
export function registerBacktest(session: EditorSession): void {
  const host = session;
  const engine = session.engine;
  session.context.subscriptions.push(
    vscode.commands.registerCommand('evotrainer.backtestVersion', (arg?: unknown, against?: unknown) => {
      const lens = lensArg(arg);
      if (lens) return engine().backtestThisChange(host, lens).then(whenDone('backtested'));
      const version = versionArg(arg);
      return engine().backtestVersionCommand(host, { version, against: versionArg(against), askBaseline: version === undefined }).then(whenDone('backtested'));
    }),
    vscode.commands.registerCommand('evotrainer.gateVersion', (arg?: unknown) => engine().gateVersionCommand(host, versionArg(arg)).then(whenDone('gated'))),
    vscode.commands.registerCommand('evotrainer.runEvolutionRound', () => engine().runEvolutionRound(host)),
    vscode.commands.registerCommand('evotrainer.answerPendingGate', () => engine().answerPendingGateCommand(host)),
  );
}
