/**
 * Typed messages between the extension host and a webview. A message type is a value
 * that carries its params type, so both ends are typed from one declaration:
 *
 *   export const RerunCommand = new IpcCommand<void>('doctor/rerun');
 *   host.onCommand(RerunCommand, () => …);   webview.send(RerunCommand, undefined);
 *
 * Commands go webview → host, notifications go host → webview. Nothing here imports
 * the editor or the engine, so the webview bundles import this file directly.
 */
export abstract class IpcMessageType<Params> {
  declare readonly _params: Params;
  abstract readonly kind: 'command' | 'notification';
  constructor(readonly method: string) {}
}

export class IpcCommand<Params = void> extends IpcMessageType<Params> {
  readonly kind = 'command' as const;
}

export class IpcNotification<Params> extends IpcMessageType<Params> {
  readonly kind = 'notification' as const;
}

export type IpcParams<T> = T extends IpcMessageType<infer P> ? P : never;

/** The wire shape of every message, both directions. */
export interface IpcMessage<Params = unknown> {
  method: string;
  params: Params;
}

/** Sent by the webview once its listeners are in place; the host queues until then. */
export const WebviewReadyCommand = new IpcCommand<void>('webview/ready');

/** Id of the script tag holding the initial state, so the first render never waits for a message. */
export const INITIAL_STATE_ID = 'evotrainer-initial-state';
