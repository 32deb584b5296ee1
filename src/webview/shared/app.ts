import { css, LitElement } from 'lit';
import { state } from 'lit/decorators.js';
import { HostConnection } from '../../viewer/client';
import type { IpcNotification } from '../../viewer/protocol';

/** The page's one connection to its host (the editor, or the server of `evotrainer view`). */
export const host = new HostConnection();

/**
 * Text in the editor's font and colours: every app's host element starts from this. A hidden
 * character of untrusted text (see shared/hidden.ts) shows as a boxed code point in the
 * warning colour, isolated so that it cannot reorder the text around it.
 */
export const appStyles = css`
  :host { display: block; color: var(--vscode-foreground); font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); }
  /* Links in the theme's colours (a plain browser would draw them in its own blue and purple). */
  a { color: var(--vscode-textLink-foreground); }
  a:hover, a:active { color: var(--vscode-textLink-activeForeground, var(--vscode-textLink-foreground)); }
  .hidden-char { unicode-bidi: isolate; direction: ltr; color: var(--vscode-editorWarning-foreground, var(--vscode-errorForeground)); border: 1px solid currentColor; border-radius: 2px; padding: 0 1px; margin: 0 1px; font-size: 0.85em; font-style: normal; font-weight: normal; white-space: nowrap; }
`;

/**
 * The base of every webview app. It renders the state the host embedded in the page at
 * once (no round trip), takes every whole state the host sends afterwards (a refresh, or
 * the current state again when a panel hidden behind another tab is shown), and tells the
 * host it is ready once its listeners are in place, so nothing sent before is lost.
 *
 *   @customElement('evo-health-app')
 *   class HealthApp extends AppElement<HealthState> {
 *     protected readonly stateNotification = DidChangeHealthNotification;
 *     override render() { … this.view … }
 *   }
 */
export abstract class AppElement<State> extends LitElement {
  @state() protected view: State = host.initialState<State>();

  /** The notification that carries the app's whole state. */
  protected abstract readonly stateNotification: IpcNotification<State>;

  /** A whole state from the host (and the embedded one, on connect): by default it replaces the view. */
  protected adopt(state: State): void {
    this.view = state;
  }

  /** Registers the app's other notifications; runs before the host is told the app is ready. */
  protected listen(): void {}

  override connectedCallback(): void {
    super.connectedCallback();
    host.onNotification(this.stateNotification, (s) => this.adopt(s));
    this.listen();
    this.adopt(this.view);
    host.ready();
  }
}
