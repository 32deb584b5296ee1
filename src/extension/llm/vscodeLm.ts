import * as vscode from 'vscode';
import { estimateTokens, LlmError, type ChatModel, type ChatRequest, type ChatResponse } from '../../core/llm/chat';

/**
 * The editor's own language models (`vscode.lm`) behind the engine's ChatModel interface,
 * so judges can run on whatever model the user has in the editor.
 */
export class VsCodeLmChat implements ChatModel {
  readonly endpoint = 'vscode.lm';

  private constructor(private readonly lm: vscode.LanguageModelChat) {}

  get model(): string {
    return `vscode.lm/${this.lm.vendor}/${this.lm.family}`;
  }

  /** The first editor model matching the family (any when empty); an error saying so when there is none. */
  static async select(family: string | undefined): Promise<VsCodeLmChat> {
    const models = await vscode.lm.selectChatModels(family ? { family } : {});
    const lm = models[0];
    if (!lm) throw new LlmError(`no language model${family ? ` of family "${family}"` : ''} is available in this editor; install a model provider, or set evotrainer.llm.provider to openai-compatible`, 'vscode.lm');
    return new VsCodeLmChat(lm);
  }

  async complete(req: ChatRequest): Promise<ChatResponse> {
    // vscode.lm has no system role: the system prompt goes first, as a user message.
    const messages = req.messages.map((m) => (m.role === 'assistant' ? vscode.LanguageModelChatMessage.Assistant(m.content) : vscode.LanguageModelChatMessage.User(m.content)));
    const cts = new vscode.CancellationTokenSource();
    req.signal?.addEventListener('abort', () => cts.cancel());
    try {
      const res = await this.lm.sendRequest(messages, { justification: 'EvoTrainer judges a sample of rollouts with your rubric, or proposes one harness change from the evidence.' }, cts.token);
      let content = '';
      for await (const part of res.text) content += part;
      const prompt = req.messages.reduce((n, m) => n + estimateTokens(m.content), 0);
      const completion = estimateTokens(content);
      return { content, usage: { promptTokens: prompt, completionTokens: completion, totalTokens: prompt + completion }, model: this.model, finishReason: null };
    } catch (err) {
      throw new LlmError(`vscode.lm: ${err instanceof Error ? err.message : String(err)}`, 'vscode.lm');
    } finally {
      cts.dispose();
    }
  }
}
