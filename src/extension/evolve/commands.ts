import path from 'node:path';
import * as vscode from 'vscode';
import { answerGate, evolve, pendingGate, PendingGateError, type EvolveResult, type GateAnswer, type HumanGate } from '../../core/evolve/loop';
import { LlmProposer } from '../../core/evolve/proposers';
import { readWorkingManifest } from '../../core/harness/repo';
import { resolveProfile } from '../../core/jobs';
import { defaultStorePath, RolloutStore } from '../../core/store/store';
import { fail, harnessOf, leavePending, type BacktestHost } from '../backtest/commands';
import { chatModel } from '../commands/judge';
import { requireTrust } from '../session';
import { resultWebview } from '../backtest/webviews';
import { humanGateView } from '../webviews/backtest/view';

/**
 * The evolve loop in the editor: one round under a progress notification (cancel stops
 * it between steps; every log line goes to the EvoTrainer output channel), human gates
 * asked in a notification (APPROVE / REVISE… / ABORT, and the evidence in a webview), and
 * a gate the CLI left pending answered from here.
 */

const ANSWERS = ['APPROVE', 'REVISE…', 'ABORT'] as const;
const EVIDENCE = 'Show Evidence';

function gateTitle(g: HumanGate): string {
  return `${g.gate} gate${g.version ? ` of ${g.version}` : ''}`;
}

/** Opens (or updates) the webview with the gate's evidence. */
export function showGateEvidence(host: BacktestHost, g: HumanGate, answer: string | null = null): void {
  void host.webviews.show(resultWebview, { status: 'done', kind: 'humanGate', title: `Evidence: ${gateTitle(g)}`, humanGate: humanGateView(g, answer) }, { key: `human:${g.id}`, preserveFocus: true });
}

async function feedback(g: HumanGate): Promise<string | undefined> {
  return vscode.window.showInputBox({
    title: `REVISE the ${gateTitle(g)}`,
    prompt: 'What should change? The proposer follows this feedback in the next attempt.',
    placeHolder: 'e.g. lower the penalty weight; keep the format reward',
    validateInput: (v) => (v.trim() ? undefined : 'REVISE needs the feedback the proposer should follow'),
  });
}

/** One answer from a person: a notification while the loop waits, or a pick for a pending gate. */
async function askPerson(host: BacktestHost, g: HumanGate, how: 'notification' | 'pick'): Promise<GateAnswer | undefined> {
  for (;;) {
    let choice: string | undefined;
    if (how === 'notification') {
      choice = await vscode.window.showInformationMessage(`EvoTrainer: ${gateTitle(g)} — ${g.summary}`, ...ANSWERS, EVIDENCE);
    } else {
      const items: vscode.QuickPickItem[] = [
        { label: 'APPROVE', description: 'continue the loop as proposed' },
        { label: 'REVISE…', description: 'send feedback; the proposer tries again' },
        { label: 'ABORT', description: 'stop the loop here' },
        { label: EVIDENCE, description: 'open the evidence beside' },
      ];
      choice = (await vscode.window.showQuickPick(items, { title: `Answer the ${gateTitle(g)} (asked ${g.askedAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')})`, placeHolder: g.summary }))?.label;
    }
    if (choice === undefined) return undefined;
    if (choice === EVIDENCE) {
      showGateEvidence(host, g);
      continue;
    }
    if (choice === 'APPROVE' || choice === 'ABORT') return { answer: choice };
    const text = await feedback(g);
    if (text?.trim()) return { answer: 'REVISE', feedback: text.trim() };
  }
}

function answerText(a: GateAnswer): string {
  return a.answer === 'REVISE' ? `REVISE: ${a.feedback}` : a.answer;
}

export async function runEvolutionRound(host: BacktestHost): Promise<EvolveResult | undefined> {
  if (!requireTrust('Run Evolution Round')) return undefined;
  const h = await harnessOf(host).catch((err: unknown) => {
    fail(host, 'Evolution round failed', err);
    return null;
  });
  if (!h) return undefined;
  const abort = new AbortController();
  host.output.show(true);
  host.output.info(`evolve: one round in ${h.root}`);
  let llm: LlmProposer | undefined;
  try {
    // evotrainer.evolve.proposer: skills whose trigger holds (no model), or the model of evotrainer.llm.*.
    if (vscode.workspace.getConfiguration('evotrainer.evolve').get<string>('proposer') === 'llm') {
      const model = await chatModel(host.context);
      llm = new LlmProposer(model, { signal: abort.signal });
      host.output.info(`evolve: the proposer is ${model.model} (${model.endpoint})`);
    }
    const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'EvoTrainer: evolution round', cancellable: true }, async (progress, token) => {
      const sub = token.onCancellationRequested(() => abort.abort());
      const manifest = readWorkingManifest(h.root);
      const store = await RolloutStore.open(defaultStorePath(h.root));
      try {
        return await evolve(h, {
          store,
          trust: vscode.workspace.isTrusted,
          budget: { rounds: 1 },
          ...(llm ? { proposer: llm } : {}),
          // A person is at the editor: a manifest that wants people in the loop gets its gates.
          autonomy: manifest.autonomy === 'human_gated' || manifest.autonomy === 'manual' ? 'human_gated' : 'full',
          skillDirs: manifest.skills?.library ? [path.resolve(h.root, manifest.skills.library)] : [],
          profile: resolveProfile(manifest.clusters, null, manifest.cluster),
          signal: abort.signal,
          log: (line) => {
            host.output.info(line);
            progress.report({ message: line.replace(/^\[\s*[\d.]+s\]\s*/, '').slice(0, 120) });
          },
          ask: async (g) => {
            const a = await askPerson(host, g, 'notification');
            if (a) {
              host.output.info(`${gateTitle(g)}: ${answerText(a)}`);
              return a;
            }
            // Dismissed: the gate waits, as it would for the CLI; answer it later.
            leavePending(h.root, g);
            throw new PendingGateError(g);
          },
        });
      } finally {
        sub.dispose();
        store.close();
      }
    });
    for (const r of llm?.refusals ?? []) host.output.info(`llm proposal refused: ${r}`);
    host.output.info(`evolve: stopped (${result.stopped}); versions ${result.versions.join(', ') || 'none'}; promoted ${result.promoted}`);
    void vscode.window.showInformationMessage(`EvoTrainer: evolution round done (${result.stopped}): ${result.versions.length ? `made ${result.versions.join(', ')}` : 'no new version'}; promoted ${result.promoted}.`);
    host.refresh();
    return result;
  } catch (err) {
    host.refresh();
    if (err instanceof PendingGateError) {
      host.output.info(err.message);
      void vscode.window.showInformationMessage(`EvoTrainer: the ${gateTitle(err.gate)} waits for an answer.`, 'Answer Pending Gate').then((p) => {
        if (p) void vscode.commands.executeCommand('evotrainer.answerPendingGate');
      });
      return undefined;
    }
    if (abort.signal.aborted) {
      host.output.info(`evolve: cancelled (${message(err)})`);
      void vscode.window.showInformationMessage('EvoTrainer: evolution round cancelled; rerun it to resume where it stopped.');
      return undefined;
    }
    fail(host, 'Evolution round failed', err);
    return undefined;
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Reads the gate the loop left pending (the CLI without a terminal, or a dismissed question) and answers it. */
export async function answerPendingGateCommand(host: BacktestHost): Promise<GateAnswer | undefined> {
  if (!requireTrust('Answer Pending Gate')) return undefined;
  try {
    const h = await harnessOf(host);
    if (!h) return undefined;
    const g = pendingGate(h);
    if (!g) {
      void vscode.window.showInformationMessage('EvoTrainer: no gate is waiting for an answer.');
      return undefined;
    }
    showGateEvidence(host, g);
    const a = await askPerson(host, g, 'pick');
    if (!a) return undefined;
    answerGate(h, a);
    host.output.info(`answered the ${gateTitle(g)}: ${answerText(a)}`);
    showGateEvidence(host, g, answerText(a));
    void vscode.window.showInformationMessage(`EvoTrainer: answered the ${gateTitle(g)}: ${a.answer}. The loop continues on its next run.`, 'Run Evolution Round').then((next) => {
      if (next) void vscode.commands.executeCommand('evotrainer.runEvolutionRound');
    });
    return a;
  } catch (err) {
    fail(host, 'Answer Pending Gate failed', err);
    return undefined;
  }
}
