import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as z from 'zod/mini';
import { HostConnection } from '../../src/viewer/client';
import { IpcCommand, IpcNotification, IpcRequest, WebviewReadyCommand, type IpcMessage } from '../../src/viewer/protocol';
import { HostTransport } from '../../src/viewer/transport';

const Echo = new IpcRequest<{ text: string }, string>('probe/echo', z.strictObject({ text: z.string() }));
const Nope = new IpcRequest<void, number>('probe/nope', null);
const Ping = new IpcCommand<void>('probe/ping', null);
const Tick = new IpcNotification<number>('probe/tick');

/**
 * A page in the editor, in Node: the page's side runs as is, with the webview's
 * messaging played by the host transport, answering out of order.
 */
function editorPage() {
  const g = globalThis as Record<string, unknown>;
  const listeners: ((e: { data: unknown }) => void)[] = [];
  const posted: IpcMessage[] = [];
  const held: (() => void)[] = [];
  let pings = 0;
  const transport = new HostTransport('probe').serve(
    { echo: Echo, nope: Nope, ping: Ping },
    {
      echo: ({ text }) => text.toUpperCase(),
      nope: () => {
        throw new Error('no store here');
      },
      ping: () => void pings++,
    },
  );
  const toPage = (data: unknown) => listeners.forEach((l) => l({ data }));
  g.window = { addEventListener: (_: string, l: (e: { data: unknown }) => void) => listeners.push(l) };
  g.acquireVsCodeApi = () => ({
    postMessage: (m: IpcMessage) => {
      posted.push(m);
      // Answered later, in reverse order of asking.
      held.unshift(() => void transport.receive(m).then((answer) => answer && toPage(answer)));
    },
  });
  const host = new HostConnection();
  delete g.acquireVsCodeApi;
  delete g.window;
  return { host, posted, toPage, flush: () => held.splice(0).forEach((f) => f()), pings: () => pings };
}

describe('viewer client (the page side)', () => {
  it('numbers requests and matches each answer to its request, whatever the order', async () => {
    const page = editorPage();
    assert.equal(page.host.inEditor, true);
    const a = page.host.request(Echo, { text: 'first' });
    const b = page.host.request(Echo, { text: 'second' });
    assert.deepEqual(page.posted.map((m) => [m.id, m.method]), [[1, 'probe/echo'], [2, 'probe/echo']]);
    page.flush();
    assert.deepEqual(await Promise.all([a, b]), ['FIRST', 'SECOND']);
  });

  it("rejects a request with the host's reason: a handler's error, invalid parameters", async () => {
    const page = editorPage();
    const failed = page.host.request(Nope, undefined);
    const invalid = page.host.request(Echo, { text: 7 } as unknown as { text: string });
    page.flush();
    await assert.rejects(failed, /^Error: no store here$/);
    await assert.rejects(invalid, /invalid parameters for "probe\/echo"/);
  });

  it('sends commands without an id, the ready handshake, and delivers notifications', async () => {
    const page = editorPage();
    const ticks: number[] = [];
    page.host.onNotification(Tick, (n) => ticks.push(n));
    page.host.send(Ping, undefined);
    page.host.ready();
    assert.deepEqual(page.posted.map((m) => [m.id, m.method]), [[undefined, 'probe/ping'], [undefined, WebviewReadyCommand.method]]);
    page.flush();
    await new Promise((r) => setImmediate(r));
    assert.equal(page.pings(), 1);
    page.toPage({ method: 'probe/tick', params: 3 });
    page.toPage({ id: 99, result: 'stray answer, ignored' });
    page.toPage(null);
    assert.deepEqual(ticks, [3]);
  });
});
