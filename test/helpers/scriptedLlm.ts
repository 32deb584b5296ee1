import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted OpenAI-compatible chat-completions server on 127.0.0.1: the stand-in for a
 * hosted LLM in the tests. It answers POST /v1/chat/completions from a script (canned
 * JSON chosen from the request, malformed JSON, 429 or 5xx, delays) and records every
 * request, so that tests can count the calls a run made and read what was sent.
 */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: {
    model?: string;
    messages?: { role: string; content: string }[];
    max_tokens?: number;
    temperature?: number;
    response_format?: { type: string };
  };
  /** The system and user messages, for convenience. */
  system: string;
  user: string;
}

export interface ScriptedReply {
  status?: number;
  /** The assistant message content of a 200 answer. */
  content?: string;
  /** A raw body instead of a chat completion (malformed server answers). */
  raw?: string;
  headers?: Record<string, string>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  delayMs?: number;
}

export type Script = (req: RecordedRequest, index: number) => ScriptedReply | Promise<ScriptedReply>;

export interface ScriptedLlm {
  /** Base URL, `http://127.0.0.1:PORT/v1`. */
  url: string;
  requests: RecordedRequest[];
  script: Script;
  close(): Promise<void>;
}

export async function startScriptedLlm(script: Script): Promise<ScriptedLlm> {
  const state: ScriptedLlm = { url: '', requests: [], script, close: async () => {} };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        let body: RecordedRequest['body'] = {};
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as RecordedRequest['body'];
        } catch {
          res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad JSON body"}}');
          return;
        }
        const messages = body.messages ?? [];
        const rec: RecordedRequest = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body,
          system: messages.find((m) => m.role === 'system')?.content ?? '',
          user: messages.find((m) => m.role === 'user')?.content ?? '',
        };
        state.requests.push(rec);
        if (req.method !== 'POST' || !/\/v1\/chat\/completions$/.test(req.url ?? '')) {
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
          return;
        }
        const reply = await state.script(rec, state.requests.length - 1);
        if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
        if (res.destroyed) return;
        const status = reply.status ?? 200;
        const headers = { 'content-type': 'application/json', ...reply.headers };
        if (reply.raw !== undefined) {
          res.writeHead(status, headers).end(reply.raw);
          return;
        }
        if (status !== 200) {
          res.writeHead(status, headers).end(JSON.stringify({ error: { message: `scripted ${status}` } }));
          return;
        }
        const content = reply.content ?? '';
        const usage = reply.usage === undefined ? { prompt_tokens: Math.ceil(JSON.stringify(messages).length / 4), completion_tokens: Math.ceil(content.length / 4), total_tokens: Math.ceil(JSON.stringify(messages).length / 4) + Math.ceil(content.length / 4) } : reply.usage;
        res.writeHead(200, headers).end(
          JSON.stringify({
            id: `chatcmpl-${state.requests.length}`,
            object: 'chat.completion',
            model: body.model ?? 'scripted',
            choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
            ...(usage ? { usage } : {}),
          }),
        );
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  state.url = `http://127.0.0.1:${port}/v1`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}

/** The rollout id a judge request is about (from its "rollout N;" line). */
export function rolloutIdOf(req: RecordedRequest): number {
  const m = /^rollout (\d+);/m.exec(req.user);
  if (!m) throw new Error(`no rollout id in the request: ${req.user.slice(0, 200)}`);
  return Number(m[1]);
}

/** The delimited trajectory block of a judge request, markers included, or null. */
export function trajectoryBlock(req: RecordedRequest): { nonce: string; text: string } | null {
  const m = /<<<TRAJECTORY ([0-9a-f]+)>>>\n([\s\S]*)\n<<<END TRAJECTORY \1>>>/.exec(req.user);
  return m ? { nonce: m[1]!, text: m[2]! } : null;
}
