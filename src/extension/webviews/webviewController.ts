import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { renderWebviewHtml } from '../../viewer/html';
import { WebviewReadyCommand, type HostMethods, type HostProtocol, type IpcMessage, type IpcNotification } from '../../viewer/protocol';
import { asMessage, HostTransport } from '../../viewer/transport';

export interface WebviewControllerOptions<State> {
  /** Name of the webview bundle under dist/webview/ (one per feature). */
  app: string;
  title: string;
  initialState: State;
  /** The notification that carries the whole state: what `setState` sends, and what is sent again on re-show. */
  stateNotification: IpcNotification<State>;
  /** Whether the editor keeps the document while the panel is hidden (else it reloads it on re-show). */
  retainContextWhenHidden: boolean;
  log: vscode.LogOutputChannel;
}

/**
 * Hosts one webview app in a panel (the panel itself comes from WebviewHost): builds its
 * HTML with a fresh CSP nonce and the initial state embedded, waits for the app's ready
 * handshake before sending anything (notifications are queued until then), hands every
 * other message to the viewer transport (which runs only declared, validated methods and
 * answers requests), and keeps the panel's current state: a document the
 * editor discarded while hidden is reloaded on re-show and gets that state, not the one
 * it was created with.
 */
export class WebviewController<State> implements vscode.Disposable {
  private ready = false;
  private readonly queue: IpcMessage[] = [];
  private readonly transport: HostTransport;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly onDidDisposeEmitter = new vscode.EventEmitter<void>();
  readonly onDidDispose = this.onDidDisposeEmitter.event;
  private readonly onDidShowEmitter = new vscode.EventEmitter<void>();
  /** Fires when the panel becomes visible again after another tab was in front of it. */
  readonly onDidShow = this.onDidShowEmitter.event;
  private readonly onDidHideEmitter = new vscode.EventEmitter<void>();
  /** Fires when another tab comes in front of the panel (or its group is hidden). */
  readonly onDidHide = this.onDidHideEmitter.event;
  private current: State;
  private visible: boolean;
  /** Set once the panel has been hidden: its first showing is not a re-show. */
  private wasHidden = false;

  constructor(
    readonly panel: vscode.WebviewPanel,
    private readonly extensionUri: vscode.Uri,
    private readonly options: WebviewControllerOptions<State>,
  ) {
    this.transport = new HostTransport(options.app, (level, m) => options.log[level](m));
    this.current = options.initialState;
    this.visible = panel.visible;
    panel.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview')] };
    this.disposables.push(
      panel.webview.onDidReceiveMessage((m: unknown) => void this.receive(m)),
      panel.onDidChangeViewState(() => this.visibilityChanged()),
      panel.onDidDispose(() => this.dispose()),
    );
    panel.webview.html = this.html(options.initialState);
  }

  /** The state the panel shows (or will show once its app is ready). */
  get state(): State {
    return this.current;
  }

  /** Sets the panel's whole state: sent now when the app listens, else kept for when it does. */
  setState(state: State): void {
    this.current = state;
    if (this.ready) void this.panel.webview.postMessage({ method: this.options.stateNotification.method, params: state } satisfies IpcMessage<State>);
  }

  private visibilityChanged(): void {
    const visible = this.panel.visible;
    if (visible === this.visible) return;
    this.visible = visible;
    if (!visible) {
      this.wasHidden = true;
      // The editor discards a hidden document it does not retain; its reload says ready again.
      if (!this.options.retainContextWhenHidden) this.ready = false;
      this.onDidHideEmitter.fire();
      return;
    }
    if (this.wasHidden) this.onDidShowEmitter.fire();
  }

  /** The feature's method map: one handler per message its page may send. */
  serve<P extends HostProtocol>(protocol: P, handlers: HostMethods<P>): void {
    this.transport.serve(protocol, handlers);
  }

  notify<P>(type: IpcNotification<P>, params: P): void {
    const message: IpcMessage<P> = { method: type.method, params };
    if (!this.ready) {
      this.queue.push(message);
      return;
    }
    void this.panel.webview.postMessage(message);
  }

  private async receive(raw: unknown): Promise<void> {
    if (asMessage(raw)?.method === WebviewReadyCommand.method) {
      this.ready = true;
      // A reloaded document starts from the state embedded at creation: give it the current one.
      void this.panel.webview.postMessage({ method: this.options.stateNotification.method, params: this.current } satisfies IpcMessage<State>);
      for (const m of this.queue.splice(0)) void this.panel.webview.postMessage(m);
      return;
    }
    const answer = await this.transport.receive(raw);
    if (answer && !this.disposed) void this.panel.webview.postMessage(answer);
  }

  private html(state: State): string {
    const webview = this.panel.webview;
    return renderWebviewHtml({
      app: this.options.app,
      title: this.options.title,
      state,
      cspSource: webview.cspSource,
      nonce: randomBytes(16).toString('base64'),
      asset: (name) => webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview', name)).toString(),
    });
  }

  private disposed = false;

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.onDidDisposeEmitter.fire();
    this.onDidDisposeEmitter.dispose();
    this.onDidShowEmitter.dispose();
    this.onDidHideEmitter.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
    this.panel.dispose();
  }
}
