import * as vscode from 'vscode';
import { markHidden } from '../../core/util/hidden';
import type { IpcNotification } from '../../viewer/protocol';
import type { EditorSession } from '../session';
import { WebviewController } from './webviewController';

/**
 * A webview feature as registered: what the editor knows before the feature's code is
 * loaded. Adding a panel is one of these plus its webview app under src/webview/<id>/.
 */
export interface WebviewDescriptor<State, Args = void, Result = void> {
  /** The panel's view type is `evotrainer.<id>`, its app the bundle dist/webview/<id>.js. */
  readonly id: string;
  /** The tab's title; `key` tells panels of one feature apart (a version's id, a backtest's key). */
  title(key: string): string;
  /**
   * Keep the webview's document while its tab is hidden (scroll position, fetched pages);
   * otherwise the editor discards it and the controller restores the current state on re-show.
   */
  readonly retainContextWhenHidden?: boolean;
  /** The feature's host side, loaded when a panel of it is first opened (most live in the engine bundle: `session.engine()`). */
  load(session: EditorSession): WebviewFeature<State, Args, Result> | Promise<WebviewFeature<State, Args, Result>>;
}

/** The feature's host side: its state message, what a new panel starts with, and the panel's provider. */
export interface WebviewFeature<State, Args, Result> {
  /** The notification carrying the whole state (sent again whenever a hidden panel is shown). */
  readonly stateNotification: IpcNotification<State>;
  initialState(session: EditorSession, key: string): State;
  create(panel: WebviewPanelContext<State>): WebviewProvider<Args, Result>;
}

export interface WebviewPanelContext<State> {
  readonly session: EditorSession;
  readonly key: string;
  readonly controller: WebviewController<State>;
}

/** One open panel's host side. The host calls these; the provider sets the state through its controller. */
export interface WebviewProvider<Args, Result> {
  /** Opened, or revealed again, by a command with its arguments. */
  show(args: Args): Result | Promise<Result>;
  /**
   * The panel was hidden (another tab in front) and is visible again: bring it up to date
   * with the data now. Without this hook the last state is shown again as it was.
   */
  onDidShow?(): void;
  /** Another tab came in front: let go of what the hidden panel need not hold (the store, for imports meanwhile). */
  onDidHide?(): void;
  /** The data changed (a decision, an import, a new version): recompute what is shown. */
  refresh?(): void;
  dispose?(): void;
}

export interface ShowOptions {
  /** Which panel of the feature (one per key); '' when the feature has one panel. */
  key?: string;
  column?: vscode.ViewColumn;
  preserveFocus?: boolean;
}

interface OpenPanel {
  descriptor: WebviewDescriptor<unknown, unknown, unknown>;
  key: string;
  controller: WebviewController<unknown>;
  provider: WebviewProvider<unknown, unknown>;
}

/**
 * The one place webview panels are created: it loads a feature's code on first open,
 * keeps one panel per (feature, key), reveals it when opened again, and on re-show
 * (after another tab was in front) has the controller restore the current state and the
 * provider bring its data up to date.
 */
export class WebviewHost implements vscode.Disposable {
  private readonly open = new Map<string, OpenPanel>();
  private readonly opening = new Map<string, Promise<OpenPanel>>();

  constructor(private readonly session: EditorSession) {}

  /** Opens (or reveals) the feature's panel for `key` and hands it the arguments; resolves to what the provider's `show` returns. */
  async show<State, Args, Result>(d: WebviewDescriptor<State, Args, Result>, args: Args, opts: ShowOptions = {}): Promise<Result> {
    const id = `${d.id}|${opts.key ?? ''}`;
    let p = this.open.get(id);
    // Revealed where it is: a panel the user moved stays in its column.
    if (p) p.controller.panel.reveal(undefined, opts.preserveFocus);
    else {
      let pending = this.opening.get(id);
      if (!pending) {
        pending = this.create(d as unknown as WebviewDescriptor<unknown, unknown, unknown>, opts);
        this.opening.set(id, pending);
      }
      try {
        p = await pending;
      } finally {
        this.opening.delete(id);
      }
    }
    return (await p.provider.show(args)) as Result;
  }

  /** The provider of an open panel, if that panel is open. */
  get<Args, Result>(d: WebviewDescriptor<unknown, Args, Result>, key = ''): WebviewProvider<Args, Result> | undefined {
    return this.open.get(`${d.id}|${key}`)?.provider as WebviewProvider<Args, Result> | undefined;
  }

  /** The keys of the feature's open panels. */
  keys(d: WebviewDescriptor<unknown, never, unknown>): string[] {
    return [...this.open.values()].filter((p) => p.descriptor.id === d.id).map((p) => p.key);
  }

  /** After a change of data: every open panel recomputes what it shows. */
  refreshAll(): void {
    for (const p of this.open.values()) p.provider.refresh?.();
  }

  private async create(d: WebviewDescriptor<unknown, unknown, unknown>, opts: ShowOptions): Promise<OpenPanel> {
    const key = opts.key ?? '';
    const feature = await d.load(this.session);
    const { context, output } = this.session;
    // A tab title from a version or run name: its hidden characters (a bidi override) as marks.
    const title = markHidden(d.title(key));
    const panel = vscode.window.createWebviewPanel(
      `evotrainer.${d.id}`,
      title,
      { viewColumn: opts.column ?? vscode.ViewColumn.Active, preserveFocus: opts.preserveFocus ?? false },
      { retainContextWhenHidden: d.retainContextWhenHidden ?? false },
    );
    panel.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'evotrainer.svg');
    const controller = new WebviewController<unknown>(panel, context.extensionUri, {
      app: d.id,
      title,
      initialState: feature.initialState(this.session, key),
      stateNotification: feature.stateNotification,
      retainContextWhenHidden: d.retainContextWhenHidden ?? false,
      log: output,
    });
    const provider = feature.create({ session: this.session, key, controller });
    const open: OpenPanel = { descriptor: d, key, controller, provider };
    const id = `${d.id}|${key}`;
    this.open.set(id, open);
    controller.onDidShow(() => provider.onDidShow?.());
    controller.onDidHide(() => provider.onDidHide?.());
    controller.onDidDispose(() => {
      if (this.open.get(id) === open) this.open.delete(id);
      provider.dispose?.();
    });
    return open;
  }

  dispose(): void {
    for (const p of [...this.open.values()]) p.controller.dispose();
  }
}
