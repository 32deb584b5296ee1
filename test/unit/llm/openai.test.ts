import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { LlmError } from '../../../src/core/llm/chat';
import { chatCompletionsUrl, OpenAiChatModel, openAiChatFromEnv } from '../../../src/core/llm/openai';
import { startScriptedLlm, type ScriptedLlm } from '../../helpers/scriptedLlm';

// The server below is a scripted stand-in for a hosted OpenAI-compatible LLM (test/helpers/scriptedLlm.ts).
const servers: ScriptedLlm[] = [];
async function llm(script: Parameters<typeof startScriptedLlm>[0]): Promise<ScriptedLlm> {
  const s = await startScriptedLlm(script);
  servers.push(s);
  return s;
}
after(async () => {
  for (const s of servers) await s.close();
});

const ask = { messages: [{ role: 'user' as const, content: 'hi' }] };

describe('OpenAI-compatible chat client', () => {
  it('normalizes endpoints to …/chat/completions and rejects non-URLs', () => {
    assert.equal(chatCompletionsUrl('http://h:1/v1'), 'http://h:1/v1/chat/completions');
    assert.equal(chatCompletionsUrl('http://h:1/v1/'), 'http://h:1/v1/chat/completions');
    assert.equal(chatCompletionsUrl('http://h:1/v1/chat/completions'), 'http://h:1/v1/chat/completions');
    assert.throws(() => chatCompletionsUrl('localhost:8000'), /not a URL|only http/);
    assert.throws(() => chatCompletionsUrl('nope'), /"nope" is not a URL/);
  });

  it('takes endpoint, model and key from the environment, options first; sends the key as a bearer token', async () => {
    const s = await llm(() => ({ content: 'hello', usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }));
    const env = { EVOTRAINER_LLM_ENDPOINT: s.url, EVOTRAINER_LLM_MODEL: 'env-model', EVOTRAINER_LLM_API_KEY: 'sk-test-123' };
    const m = openAiChatFromEnv({}, env);
    const r = await m.complete({ ...ask, maxTokens: 7, json: true, temperature: 0 });
    assert.equal(r.content, 'hello');
    assert.deepEqual(r.usage, { promptTokens: 3, completionTokens: 1, totalTokens: 4 });
    const req = s.requests[0]!;
    assert.equal(req.path, '/v1/chat/completions');
    assert.equal(req.headers.authorization, 'Bearer sk-test-123');
    assert.equal(req.body.model, 'env-model');
    assert.equal(req.body.max_tokens, 7);
    assert.deepEqual(req.body.response_format, { type: 'json_object' });
    assert.equal(openAiChatFromEnv({ model: 'opt-model' }, env).model, 'opt-model');
    assert.throws(() => openAiChatFromEnv({}, {}), /EVOTRAINER_LLM_ENDPOINT/);
    assert.throws(() => openAiChatFromEnv({}, { EVOTRAINER_LLM_ENDPOINT: s.url }), /EVOTRAINER_LLM_MODEL/);
  });

  it('retries 429 and 5xx with backoff (Retry-After honoured), then succeeds', async () => {
    const s = await llm((_r, i) => (i === 0 ? { status: 429, headers: { 'retry-after': '0' } } : i === 1 ? { status: 503 } : { content: 'ok' }));
    const m = new OpenAiChatModel({ endpoint: s.url, model: 'm', baseDelayMs: 5 });
    const t0 = Date.now();
    assert.equal((await m.complete(ask)).content, 'ok');
    assert.equal(s.requests.length, 3);
    assert.ok(Date.now() - t0 < 2000);
  });

  it('gives up after maxRetries with an error naming the endpoint and the status', async () => {
    const s = await llm(() => ({ status: 500 }));
    const m = new OpenAiChatModel({ endpoint: s.url, model: 'm', baseDelayMs: 1, maxRetries: 2 });
    await assert.rejects(m.complete(ask), (e: LlmError) => e instanceof LlmError && e.status === 500 && e.message.includes(`${s.url}/chat/completions`) && /gave up after 3 attempts/.test(e.message));
    assert.equal(s.requests.length, 3);
  });

  it('does not retry a 401, and never puts the key in the message', async () => {
    const s = await llm(() => ({ status: 401 }));
    const m = new OpenAiChatModel({ endpoint: s.url, model: 'm', apiKey: 'sk-secret-xyz', baseDelayMs: 1 });
    await assert.rejects(m.complete(ask), (e: Error) => /HTTP 401/.test(e.message) && !e.message.includes('sk-secret-xyz'));
    assert.equal(s.requests.length, 1);
  });

  it('times out a silent server, naming the endpoint', async () => {
    const s = await llm(() => ({ content: 'late', delayMs: 1000 }));
    const m = new OpenAiChatModel({ endpoint: s.url, model: 'm', timeoutMs: 100, maxRetries: 0 });
    await assert.rejects(m.complete(ask), (e: Error) => e.message.includes(s.url) && /no answer within 100 ms/.test(e.message));
  });

  it('reports an unreachable endpoint by URL', async () => {
    const srv = http.createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as AddressInfo).port;
    await new Promise<void>((r) => srv.close(() => r()));
    const m = new OpenAiChatModel({ endpoint: `http://127.0.0.1:${port}/v1`, model: 'm', maxRetries: 1, baseDelayMs: 1 });
    await assert.rejects(m.complete(ask), (e: Error) => e.message.includes(`127.0.0.1:${port}`) && /unreachable/.test(e.message));
  });

  it('drops JSON mode once when the server rejects response_format', async () => {
    const s = await llm((r) => (r.body.response_format ? { status: 400, raw: '{"error":{"message":"response_format is not supported"}}' } : { content: '{}' }));
    const m = new OpenAiChatModel({ endpoint: s.url, model: 'm' });
    assert.equal((await m.complete({ ...ask, json: true })).content, '{}');
    assert.equal((await m.complete({ ...ask, json: true })).content, '{}');
    assert.equal(s.requests.length, 3, 'one rejected request, then JSON mode stays off');
  });

  it('rejects an answer that is not a chat completion', async () => {
    const s = await llm(() => ({ raw: '<html>proxy error</html>' }));
    await assert.rejects(new OpenAiChatModel({ endpoint: s.url, model: 'm' }).complete(ask), /not JSON/);
    const s2 = await llm(() => ({ raw: '{"choices": []}' }));
    await assert.rejects(new OpenAiChatModel({ endpoint: s2.url, model: 'm' }).complete(ask), /no chat completion/);
  });
});
