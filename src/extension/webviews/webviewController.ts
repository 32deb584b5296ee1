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
  log: vscode.LogOutputChannel;
}

/**
 * Hosts one webview app in a panel: builds its HTML with a fresh CSP nonce and the
 * initial state embedded, waits for the app's ready handshake before sending anything
 * (notifications are queued until then), and hands every other message to the viewer
 * transport, which runs only declared, validated methods and answers requests.
 */
export class WebviewController<State> implements vscode.Disposable {
  private ready = false;
  private readonly queue: IpcMessage[] = [];
  private readonly transport: HostTransport;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly onDidDisposeEmitter = new vscode.EventEmitter<void>();
  readonly onDidDispose = this.onDidDisposeEmitter.event;

  constructor(
    readonly panel: vscode.WebviewPanel,
    private readonly extensionUri: vscode.Uri,
    private readonly options: WebviewControllerOptions<State>,
  ) {
    this.transport = new HostTransport(options.app, (level, m) => options.log[level](m));
    panel.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview')] };
    this.disposables.push(
      panel.webview.onDidReceiveMessage((m: unknown) => void this.receive(m)),
      panel.onDidDispose(() => this.dispose()),
    );
    panel.webview.html = this.html(options.initialState);
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
    for (const d of this.disposables.splice(0)) d.dispose();
    this.panel.dispose();
  }
}
