/**
 * The chat-model interface judges talk to. One implementation here (an OpenAI-compatible
 * chat-completions client); the editor adapts `vscode.lm` to the same interface outside
 * core, so nothing here depends on the editor.
 */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatRequest {
  messages: ChatMessage[];
  /** Upper bound on the answer's tokens. */
  maxTokens?: number;
  temperature?: number;
  /** Ask for a JSON object (`response_format: json_object` where the server supports it). */
  json?: boolean;
  signal?: AbortSignal;
}

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ChatResponse {
  content: string;
  /** As the server reported it; null when it reported none. */
  usage: ChatUsage | null;
  /** The model the server says answered. */
  model: string;
  finishReason: string | null;
}

export interface ChatModel {
  /** The model name requests ask for (part of the judge cache key). */
  readonly model: string;
  /** Where requests go, for messages (never holds a secret). */
  readonly endpoint: string;
  complete(req: ChatRequest): Promise<ChatResponse>;
}

/** A failed model call, naming the endpoint; `status` is the HTTP status when there was one. */
export class LlmError extends Error {
  constructor(
    message: string,
    readonly endpoint: string,
    readonly status?: number,
    readonly retryable = false,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}

/** A rough token count (4 characters a token) for budgets, when a server reports no usage. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
