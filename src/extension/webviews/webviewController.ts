import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { ZodMiniType as ZodType } from 'zod/mini';
import { renderWebviewHtml } from '../../viewer/html';
import { WebviewReadyCommand, type IpcCommand, type IpcMessage, type IpcNotification } from '../../viewer/protocol';

export interface WebviewControllerOptions<State> {
  /** Name of the webview bundle under dist/webview/ (one per feature). */
  app: string;
  title: string;
  initialState: State;
  log: vscode.LogOutputChannel;
}

interface Handler {
  schema: ZodType | null;
  run(params: unknown): void | Promise<void>;
}

/**
 * Hosts one webview app in a panel: builds its HTML with a fresh CSP nonce and the
 * initial state embedded, waits for the app's ready handshake before sending anything
 * (notifications are queued until then), and accepts only declared, validated commands.
 */
export class WebviewController<State> implements vscode.Disposable {
  private ready = false;
  private readonly queue: IpcMessage[] = [];
  private readonly handlers = new Map<string, Handler>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly onDidDisposeEmitter = new vscode.EventEmitter<void>();
  readonly onDidDispose = this.onDidDisposeEmitter.event;

  constructor(
    readonly panel: vscode.WebviewPanel,
    private readonly extensionUri: vscode.Uri,
    private readonly options: WebviewControllerOptions<State>,
  ) {
    panel.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview')] };
    this.disposables.push(
      panel.webview.onDidReceiveMessage((m: unknown) => void this.receive(m)),
      panel.onDidDispose(() => this.dispose()),
    );
    panel.webview.html = this.html(options.initialState);
  }

  onCommand<P>(type: IpcCommand<P>, schema: ZodType<P> | null, run: (params: P) => void | Promise<void>): void {
    this.handlers.set(type.method, { schema, run: run as Handler['run'] });
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
    if (typeof raw !== 'object' || raw === null || typeof (raw as IpcMessage).method !== 'string') {
      this.options.log.warn(`[${this.options.app}] ignored a malformed webview message`);
      return;
    }
    const { method, params } = raw as IpcMessage;
    if (method === WebviewReadyCommand.method) {
      this.ready = true;
      for (const m of this.queue.splice(0)) void this.panel.webview.postMessage(m);
      return;
    }
    const handler = this.handlers.get(method);
    if (!handler) {
      this.options.log.warn(`[${this.options.app}] ignored unknown command "${method.slice(0, 80)}"`);
      return;
    }
    let value: unknown = params;
    if (handler.schema) {
      const parsed = handler.schema.safeParse(params);
      if (!parsed.success) {
        this.options.log.warn(`[${this.options.app}] rejected "${method}": ${parsed.error.message}`);
        return;
      }
      value = parsed.data;
    }
    try {
      await handler.run(value);
    } catch (err) {
      this.options.log.error(`[${this.options.app}] "${method}" failed: ${err instanceof Error ? err.message : String(err)}`);
    }
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
