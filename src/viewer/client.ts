import { INITIAL_STATE_ID, WebviewReadyCommand, type IpcCommand, type IpcMessage, type IpcNotification, type IpcRequest, type IpcResponse } from './protocol';
import { errorText } from './transport';

interface VsCodeApi {
  postMessage(message: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/** How a page reaches its host: the editor's webview messaging, or HTTP to the server that served it. */
interface Channel {
  post(message: IpcMessage): void;
}

/**
 * The page's side of the viewer protocol, in either home: inside the editor (a webview:
 * messages through the VS Code API) or in a plain browser served by `evotrainer view`
 * (each message POSTed as JSON to the page's own origin; a request's answer comes back
 * in the response body). Requests are numbered here and their answers matched by id: a
 * request resolves with its result or rejects with the host's reason.
 */
export class HostConnection {
  private readonly listeners = new Map<string, (params: unknown) => void>();
  private readonly pending = new Map<number, { resolve(result: unknown): void; reject(err: Error): void }>();
  private nextId = 1;
  private readonly channel: Channel;
  readonly inEditor: boolean;

  constructor() {
    this.inEditor = typeof acquireVsCodeApi === 'function';
    if (this.inEditor) {
      const api = acquireVsCodeApi();
      this.channel = { post: (m) => api.postMessage(m) };
      window.addEventListener('message', (e: MessageEvent) => this.dispatch(e.data));
    } else {
      this.channel = { post: (m) => void this.postHttp(m) };
    }
  }

  /** The page lives at /<token>/; its API beside it. */
  private async postHttp(message: IpcMessage): Promise<void> {
    try {
      const r = await fetch('api', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(message) });
      if (r.status === 204) return;
      if (!/^application\/json\b/.test(r.headers.get('content-type') ?? '')) throw new Error(`${r.status} ${await r.text()}`);
      // The answer, or the answer and the notifications the host had for the page meanwhile.
      const body = (await r.json()) as unknown;
      for (const m of Array.isArray(body) ? body : [body]) this.dispatch(m);
    } catch (err) {
      const error = errorText(err);
      if (message.id !== undefined) this.dispatch({ id: message.id, error, code: 'failed' } satisfies IpcResponse);
      else console.error(`"${message.method}" failed: ${error}`);
    }
  }

  private dispatch(m: unknown): void {
    if (typeof m !== 'object' || m === null) return;
    if (typeof (m as IpcMessage).method === 'string') {
      this.listeners.get((m as IpcMessage).method)?.((m as IpcMessage).params);
      return;
    }
    const r = m as IpcResponse;
    const waiting = typeof r.id === 'number' ? this.pending.get(r.id) : undefined;
    if (!waiting) return;
    this.pending.delete(r.id);
    if ('error' in r) waiting.reject(new Error(r.error));
    else waiting.resolve(r.result);
  }

  /** The state the host embedded in the page: the first render needs no round trip. */
  initialState<S>(): S {
    const el = document.getElementById(INITIAL_STATE_ID);
    return JSON.parse(el?.textContent ?? 'null') as S;
  }

  onNotification<P>(type: IpcNotification<P>, listener: (params: P) => void): void {
    this.listeners.set(type.method, listener as (params: unknown) => void);
  }

  send<P>(type: IpcCommand<P>, params: P): void {
    this.channel.post({ method: type.method, params });
  }

  request<P, R>(type: IpcRequest<P, R>, params: P): Promise<R> {
    const id = this.nextId++;
    return new Promise<R>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (result: unknown) => void, reject });
      this.channel.post({ id, method: type.method, params });
    });
  }

  /** Call once every listener is registered; the host flushes what it queued. */
  ready(): void {
    if (this.inEditor) this.send(WebviewReadyCommand, undefined);
  }
}
