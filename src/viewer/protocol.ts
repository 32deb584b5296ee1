import type { ZodMiniType as ZodType } from 'zod/mini';

/**
 * Typed messages between a viewer page and its host (a VS Code panel, or the HTTP server
 * of `evotrainer view`). A message type is a value that carries its params type, and the
 * schema its params are checked against on arrival, so both ends are typed and the
 * host's checks come from one declaration:
 *
 *   export const CopyReportCommand = new IpcCommand('doctor/copyReport', z.strictObject({ format: z.enum(['json', 'text']) }));
 *   export const QueryRequest = new IpcRequest<QueryParams, PageResult>('explorer/query', QuerySchema);
 *
 * Commands go page → host and are not answered; requests go page → host and are answered
 * (the transport numbers them and matches each answer to its request); notifications go
 * host → page. Nothing here imports the editor or the engine, so the page bundles import
 * this file directly.
 */
export abstract class IpcMessageType<Params> {
  declare readonly _params: Params;
  abstract readonly kind: 'command' | 'request' | 'notification';
  constructor(readonly method: string) {}
}

/** Checks what arrives from the page; null where the message carries nothing. */
export type ParamsSchema<Params> = ZodType<Params> | null;

export class IpcCommand<Params = void> extends IpcMessageType<Params> {
  readonly kind = 'command' as const;
  constructor(
    method: string,
    readonly schema: ParamsSchema<Params>,
  ) {
    super(method);
  }
}

export class IpcRequest<Params, Result> extends IpcMessageType<Params> {
  declare readonly _result: Result;
  readonly kind = 'request' as const;
  constructor(
    method: string,
    readonly schema: ParamsSchema<Params>,
  ) {
    super(method);
  }
}

export class IpcNotification<Params> extends IpcMessageType<Params> {
  readonly kind = 'notification' as const;
}

export type IpcParams<T> = T extends IpcMessageType<infer P> ? P : never;
export type IpcResult<T> = T extends IpcRequest<unknown, infer R> ? R : never;

/** The wire shape of a command, a request (with its `id`) and a notification. */
export interface IpcMessage<Params = unknown> {
  method: string;
  params: Params;
  id?: number;
}

/**
 * The answer to the request with the same `id`: its result, or why there is none: the
 * request was refused (`unknown_method`, `invalid_params`) or its handler failed.
 */
export type IpcResponse<Result = unknown> = { id: number; result: Result } | { id: number; error: string; code: IpcErrorCode };
export type IpcErrorCode = 'unknown_method' | 'invalid_params' | 'failed';

/**
 * What the page may send a feature's host, by name: the host implements it as one
 * method map (`HostMethods`), and the transport does ids, validation and errors.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any message type of the feature, whatever its params
export type HostProtocol = Record<string, IpcCommand<any> | IpcRequest<any, unknown>>;

/** One handler per message of a protocol: a request's returns (or throws) its answer. */
export type HostMethods<P extends HostProtocol> = {
  [K in keyof P]: P[K] extends IpcRequest<infer A, infer R> ? (params: A) => Promise<R> | R : P[K] extends IpcCommand<infer A> ? (params: A) => void | Promise<void> : never;
};

/** Sent by the page once its listeners are in place; the host queues until then. */
export const WebviewReadyCommand = new IpcCommand<void>('webview/ready', null);

/** Id of the script tag holding the initial state, so the first render never waits for a message. */
export const INITIAL_STATE_ID = 'evotrainer-initial-state';
