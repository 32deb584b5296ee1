import { z } from 'zod';
import { LlmError, type ChatModel, type ChatRequest, type ChatResponse } from './chat';

export interface OpenAiChatOptions {
  /** Base URL (`https://host/v1`) or the full `…/chat/completions` URL. */
  endpoint: string;
  model: string;
  /** Sent as `Authorization: Bearer`; optional for local servers. */
  apiKey?: string;
  /** Per attempt (default 60 s). */
  timeoutMs?: number;
  /** Retries after the first attempt on 429, 5xx and network errors (default 3). */
  maxRetries?: number;
  /** First backoff (default 500 ms), doubled each retry, with jitter; a Retry-After header wins (capped at maxDelayMs). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Send `response_format: {type: 'json_object'}` when a request asks for JSON (default true; dropped once if the server rejects it). */
  jsonMode?: boolean;
  fetch?: typeof fetch;
}

export const LLM_ENV = {
  endpoint: 'EVOTRAINER_LLM_ENDPOINT',
  model: 'EVOTRAINER_LLM_MODEL',
  apiKey: 'EVOTRAINER_LLM_API_KEY',
} as const;

const Answer = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullable().optional() }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: z
    .object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional(), total_tokens: z.number().optional() })
    .nullable()
    .optional(),
});

/** `…/v1` → `…/v1/chat/completions`; a URL already ending in /chat/completions is kept. */
export function chatCompletionsUrl(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new LlmError(`LLM endpoint "${endpoint}" is not a URL (expected e.g. https://api.example.com/v1)`, endpoint);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new LlmError(`LLM endpoint "${endpoint}": only http and https are supported`, endpoint);
  const p = url.pathname.replace(/\/+$/, '');
  if (!/\/chat\/completions$/.test(p)) url.pathname = `${p}/chat/completions`;
  return url.toString();
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason as Error);
    }, { once: true });
  });

function retryAfterMs(h: string | null): number | null {
  if (!h) return null;
  const s = Number(h);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const at = Date.parse(h);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

/** An OpenAI-compatible chat-completions client (OpenAI, vLLM, SGLang, Ollama, LiteLLM, …) on Node's fetch. */
export class OpenAiChatModel implements ChatModel {
  readonly endpoint: string;
  readonly model: string;
  private readonly url: string;
  private jsonMode: boolean;

  constructor(private readonly opts: OpenAiChatOptions) {
    if (!opts.model) throw new LlmError(`no model named for LLM endpoint ${opts.endpoint} (set --model or ${LLM_ENV.model})`, opts.endpoint);
    this.url = chatCompletionsUrl(opts.endpoint);
    this.endpoint = this.url;
    this.model = opts.model;
    this.jsonMode = opts.jsonMode ?? true;
  }

  async complete(req: ChatRequest): Promise<ChatResponse> {
    const maxRetries = this.opts.maxRetries ?? 3;
    const base = this.opts.baseDelayMs ?? 500;
    const maxDelay = this.opts.maxDelayMs ?? 30_000;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once(req);
      } catch (err) {
        if (!(err instanceof LlmError) || !err.retryable || attempt >= maxRetries || req.signal?.aborted) {
          if (err instanceof LlmError && err.retryable && attempt >= maxRetries) throw new LlmError(`${err.message} (gave up after ${attempt + 1} attempts)`, err.endpoint, err.status);
          throw err;
        }
        const hinted = (err as LlmError & { retryAfterMs?: number | null }).retryAfterMs;
        const backoff = base * 2 ** attempt * (0.75 + Math.random() * 0.5);
        await sleep(Math.min(maxDelay, hinted ?? backoff), req.signal);
      }
    }
  }

  private async once(req: ChatRequest): Promise<ChatResponse> {
    const body: Record<string, unknown> = { model: this.model, messages: req.messages };
    if (req.maxTokens !== undefined) body.max_tokens = req.maxTokens;
    if (req.temperature !== undefined) body.temperature = req.temperature;
    const wantJson = req.json === true && this.jsonMode;
    if (wantJson) body.response_format = { type: 'json_object' };
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    const timeoutMs = this.opts.timeoutMs ?? 60_000;
    const signal = req.signal ? AbortSignal.any([req.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
    const doFetch = this.opts.fetch ?? fetch;
    let res: Response;
    try {
      res = await doFetch(this.url, { method: 'POST', headers, body: JSON.stringify(body), signal });
    } catch (err) {
      if (req.signal?.aborted) throw new LlmError(`LLM request to ${this.url} was cancelled`, this.url);
      const e = err as Error & { cause?: { code?: string; message?: string } };
      const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError';
      const why = timedOut ? `no answer within ${timeoutMs} ms` : `${e.cause?.code ?? e.cause?.message ?? e.message}`;
      throw new LlmError(`LLM endpoint ${this.url} unreachable: ${why}`, this.url, undefined, true);
    }
    const text = await res.text().catch(() => '');
    if (!res.ok) {
      // A server without JSON mode: retry this request once without it.
      if (wantJson && res.status === 400 && /response_format|json_object/i.test(text)) {
        this.jsonMode = false;
        return this.once(req);
      }
      const retryable = res.status === 429 || res.status >= 500;
      const err = new LlmError(`LLM endpoint ${this.url} answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}: ${text.slice(0, 300).replace(/\s+/g, ' ')}`, this.url, res.status, retryable);
      if (retryable) Object.assign(err, { retryAfterMs: retryAfterMs(res.headers.get('retry-after')) });
      throw err;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new LlmError(`LLM endpoint ${this.url} answered HTTP ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`, this.url, res.status);
    }
    const parsed = Answer.safeParse(json);
    if (!parsed.success) throw new LlmError(`LLM endpoint ${this.url} answered with no chat completion (${parsed.error.issues[0]?.message ?? 'unexpected shape'}): ${text.slice(0, 200)}`, this.url, res.status);
    const choice = parsed.data.choices[0]!;
    const u = parsed.data.usage;
    const usage =
      u && (u.total_tokens !== undefined || u.prompt_tokens !== undefined)
        ? { promptTokens: u.prompt_tokens ?? 0, completionTokens: u.completion_tokens ?? 0, totalTokens: u.total_tokens ?? (u.prompt_tokens ?? 0) + (u.completion_tokens ?? 0) }
        : null;
    return { content: choice.message.content ?? '', usage, model: parsed.data.model ?? this.model, finishReason: choice.finish_reason ?? null };
  }
}

/**
 * A client from explicit options, falling back to the environment
 * (EVOTRAINER_LLM_ENDPOINT, EVOTRAINER_LLM_MODEL, EVOTRAINER_LLM_API_KEY).
 */
export function openAiChatFromEnv(opts: Partial<OpenAiChatOptions> = {}, env: NodeJS.ProcessEnv = process.env): OpenAiChatModel {
  const endpoint = opts.endpoint ?? env[LLM_ENV.endpoint];
  const model = opts.model ?? env[LLM_ENV.model];
  if (!endpoint) throw new LlmError(`no LLM endpoint: pass --endpoint URL or set ${LLM_ENV.endpoint} (an OpenAI-compatible base URL, e.g. https://api.openai.com/v1)`, '');
  if (!model) throw new LlmError(`no model for LLM endpoint ${endpoint}: pass --model NAME, set ${LLM_ENV.model}, or name one in the rubric's front matter (model:)`, endpoint);
  const apiKey = opts.apiKey ?? env[LLM_ENV.apiKey];
  return new OpenAiChatModel({ ...opts, endpoint, model, ...(apiKey ? { apiKey } : {}) });
}
