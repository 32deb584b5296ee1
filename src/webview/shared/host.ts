import { INITIAL_STATE_ID, WebviewReadyCommand, type IpcCommand, type IpcMessage, type IpcNotification } from '../../viewer/protocol';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/** The webview's side of the typed protocol: one per app. */
export class HostConnection {
  private readonly api = acquireVsCodeApi();
  private readonly listeners = new Map<string, (params: unknown) => void>();

  constructor() {
    window.addEventListener('message', (e: MessageEvent) => {
      const m = e.data as IpcMessage | null;
      if (!m || typeof m.method !== 'string') return;
      this.listeners.get(m.method)?.(m.params);
    });
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
    this.api.postMessage({ method: type.method, params } satisfies IpcMessage<P>);
  }

  /** Call once every listener is registered; the host flushes what it queued. */
  ready(): void {
    this.send(WebviewReadyCommand, undefined);
  }
}
