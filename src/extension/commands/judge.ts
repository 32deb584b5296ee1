import path from 'node:path';
import * as vscode from 'vscode';
import { loadRubric, rubricFiles, runJudge } from '../../core/diagnose/judges';
import { findHarnessRoot } from '../../core/harness/locate';
import type { ChatModel } from '../../core/llm/chat';
import { OpenAiChatModel } from '../../core/llm/openai';
import { defaultStorePath, RolloutStore } from '../../core/store/store';
import { VsCodeLmChat } from '../llm/vscodeLm';

/** Where the API key lives: the editor's secret storage, never settings. */
export const API_KEY_SECRET = 'evotrainer.llm.apiKey';

export async function setLlmApiKey(context: vscode.ExtensionContext): Promise<void> {
  const key = await vscode.window.showInputBox({ prompt: 'API key for the OpenAI-compatible LLM endpoint (kept in the editor\'s secret storage)', password: true, ignoreFocusOut: true });
  if (key === undefined) return;
  if (key === '') await context.secrets.delete(API_KEY_SECRET);
  else await context.secrets.store(API_KEY_SECRET, key);
  void vscode.window.showInformationMessage(key ? 'EvoTrainer: LLM API key saved in secret storage.' : 'EvoTrainer: LLM API key removed.');
}

/** The model the settings choose (evotrainer.llm.provider): judges and the evolve loop's LLM proposer use it. */
export async function chatModel(context: vscode.ExtensionContext): Promise<ChatModel> {
  const cfg = vscode.workspace.getConfiguration('evotrainer.llm');
  if (cfg.get<string>('provider') === 'vscode.lm') return VsCodeLmChat.select(cfg.get<string>('model') || undefined);
  const endpoint = cfg.get<string>('endpoint');
  const model = cfg.get<string>('model');
  if (!endpoint || !model) throw new Error('set evotrainer.llm.endpoint and evotrainer.llm.model (or evotrainer.llm.provider to vscode.lm)');
  return new OpenAiChatModel({ endpoint, model, apiKey: (await context.secrets.get(API_KEY_SECRET)) ?? undefined });
}

/** "EvoTrainer: Judge Rollouts…": a rubric of the harness applied to a stratified sample. */
export async function judgeRollouts(context: vscode.ExtensionContext, output: vscode.LogOutputChannel): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.find((f) => findHarnessRoot(f.uri.fsPath));
  const root = folder ? findHarnessRoot(folder.uri.fsPath) : null;
  if (!root) {
    void vscode.window.showErrorMessage('EvoTrainer: open a harness (a folder with evotrainer.yaml) to judge its rollouts.');
    return;
  }
  const files = rubricFiles(root);
  if (!files.length) {
    void vscode.window.showErrorMessage(`EvoTrainer: no rubric yet. Write one as a markdown file under ${path.join(root, 'diagnostics', 'judges')}.`);
    return;
  }
  const pick = await vscode.window.showQuickPick(
    files.map((f) => ({ label: path.basename(f, '.md'), description: path.relative(root, f), file: f })),
    { placeHolder: 'Rubric to apply to a sample of rollouts' },
  );
  if (!pick) return;
  try {
    const rubric = loadRubric(pick.file);
    const model = await chatModel(context);
    const sample = vscode.workspace.getConfiguration('evotrainer.llm').get<number>('sample') ?? 20;
    const run = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `EvoTrainer: judging with ${rubric.name}`, cancellable: true },
      async (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        const store = await RolloutStore.open(defaultStorePath(root));
        try {
          return await runJudge(store, rubric, model, {
            sample,
            signal: abort.signal,
            onVerdict: (_v, done, total) => progress.report({ message: `${done}/${total}`, increment: 100 / Math.max(1, total) }),
          });
        } finally {
          store.close();
        }
      },
    );
    const labels = Object.entries(run.labelCounts).map(([l, n]) => `${l} ${n}`).join(', ');
    output.info(`Judge ${run.rubric.name} with ${run.model}: ${run.verdicts.length} verdicts (${run.calls} calls, ${run.cacheHits} cached, ${run.errors} errors)${run.stopped ? `; stopped: ${run.stopped}` : ''}`);
    for (const v of run.verdicts) output.info(`  rollout ${v.rolloutId}: ${v.label ?? `error: ${v.error ?? ''}`}`);
    void vscode.window.showInformationMessage(`EvoTrainer: judged ${run.verdicts.length} rollouts with ${run.rubric.name}: ${labels || 'no labels'}${run.stopped ? ` (stopped: ${run.stopped})` : ''}.`);
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    output.error(`Judge failed: ${msg}`);
    void vscode.window.showErrorMessage(`EvoTrainer: judging failed: ${msg}`);
  }
}
