import { INITIAL_STATE_ID, WebviewReadyCommand, type IpcCommand, type IpcMessage, type IpcNotification } from '../../viewer/protocol';

interface VsCodeApi {
  postMessage(message: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/**
 * The explorer's side of the typed protocol, in either home: inside the editor (a
 * webview: messages through the VS Code API) or in a plain browser served by
 * `evotrainer view` (the same messages as JSON over fetch to the page's own origin;
 * each answer comes back in the response body and is dispatched like a notification).
 */
export class ExplorerHost {
  private readonly listeners = new Map<string, (params: unknown) => void>();
  private readonly api: VsCodeApi | null;
  readonly inEditor: boolean;

  constructor() {
    this.inEditor = typeof acquireVsCodeApi === 'function';
    this.api = this.inEditor ? acquireVsCodeApi() : null;
    if (this.inEditor) {
      window.addEventListener('message', (e: MessageEvent) => this.dispatch(e.data as IpcMessage | null));
    }
  }

  private dispatch(m: IpcMessage | null): void {
    if (!m || typeof m.method !== 'string') return;
    this.listeners.get(m.method)?.(m.params);
  }

  initialState<S>(): S {
    const el = document.getElementById(INITIAL_STATE_ID);
    return JSON.parse(el?.textContent ?? 'null') as S;
  }

  onNotification<P>(type: IpcNotification<P>, listener: (params: P) => void): void {
    this.listeners.set(type.method, listener as (params: unknown) => void);
  }

  send<P>(type: IpcCommand<P>, params: P): void {
    const message: IpcMessage<P> = { method: type.method, params };
    if (this.api) {
      this.api.postMessage(message);
      return;
    }
    // The page lives at /<token>/; its API beside it.
    void fetch('api', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(message) })
      .then(async (r) => {
        if (!r.ok) throw new Error(`${r.status} ${await r.text()}`);
        return (await r.json()) as { messages: IpcMessage[] };
      })
      .then((body) => body.messages.forEach((m) => this.dispatch(m)))
      .catch((err: unknown) => console.error('explorer request failed', err));
  }

  ready(): void {
    if (this.api) this.send(WebviewReadyCommand, undefined);
  }
}
