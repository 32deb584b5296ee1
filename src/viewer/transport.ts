import type { HostMethods, HostProtocol, IpcCommand, IpcErrorCode, IpcMessage, IpcRequest, IpcResponse } from './protocol';

export type ViewerLog = (level: 'info' | 'warn' | 'error', message: string) => void;

interface Entry {
  type: IpcCommand<unknown> | IpcRequest<unknown, unknown>;
  run(params: unknown): unknown;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A message from the page: an object with a string `method` (and an integer `id` on a request). */
export function asMessage(raw: unknown): IpcMessage | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const m = raw as IpcMessage;
  if (typeof m.method !== 'string') return null;
  if (m.id !== undefined && !(Number.isSafeInteger(m.id) && m.id >= 0)) return null;
  return m;
}

/**
 * The host side of the viewer protocol, the same in every host (a VS Code panel, the
 * HTTP server of `evotrainer view`): features register their method maps, and each
 * message from the page is checked against its type's schema before its handler runs.
 * A request is always answered, with its handler's result or with the reason it has
 * none (unknown method, invalid parameters, the handler's error); a command never is.
 * Nothing the page sends can throw out of `receive`.
 */
export class HostTransport {
  private readonly methods = new Map<string, Entry>();

  constructor(
    /** Names the feature in log lines. */
    private readonly name: string,
    private readonly log?: ViewerLog,
  ) {}

  /** A feature's method map: one handler per message of its protocol. */
  serve<P extends HostProtocol>(protocol: P, handlers: HostMethods<P>): this {
    for (const key of Object.keys(protocol)) {
      const type = protocol[key]!;
      if (this.methods.has(type.method)) throw new Error(`[${this.name}] "${type.method}" is served twice`);
      this.methods.set(type.method, { type, run: (handlers as Record<string, (params: unknown) => unknown>)[key]! });
    }
    return this;
  }

  /** Whether `method` is served, and as what. */
  kindOf(method: string): 'command' | 'request' | undefined {
    return this.methods.get(method)?.type.kind;
  }

  /**
   * Why `method` would refuse `params` (null when it takes them). A command answers nothing,
   * so a host that can answer it otherwise (the HTTP viewer's status) asks first.
   */
  refusal(method: string, params: unknown): string | null {
    const entry = this.methods.get(method);
    if (!entry) return `unknown method "${method.slice(0, 80)}"`;
    const checked = this.check(entry, params);
    return 'error' in checked ? checked.error : null;
  }

  private check(entry: Entry, params: unknown): { value: unknown } | { error: string } {
    if (!entry.type.schema) return { value: params };
    const parsed = entry.type.schema.safeParse(params);
    return parsed.success ? { value: parsed.data } : { error: `invalid parameters for "${entry.type.method}": ${parsed.error.message.replace(/\s+/g, ' ').slice(0, 500)}` };
  }

  /** Runs one message from the page: the response to send back for a request, null for a command or a message dropped. */
  async receive(raw: unknown): Promise<IpcResponse | null> {
    const message = asMessage(raw);
    if (!message) {
      this.log?.('warn', `[${this.name}] ignored a malformed message`);
      return null;
    }
    const { method, params, id } = message;
    const fail = (code: IpcErrorCode, error: string, logged = error): IpcResponse | null => {
      this.log?.(code === 'failed' ? 'error' : 'warn', `[${this.name}] ${logged}`);
      return id === undefined ? null : { id, error, code };
    };
    const entry = this.methods.get(method);
    if (!entry) return fail('unknown_method', `unknown method "${method.slice(0, 80)}"`);
    if ((entry.type.kind === 'request') !== (id !== undefined)) {
      return fail('invalid_params', entry.type.kind === 'request' ? `"${method}" is a request: it needs an id` : `"${method}" is a command: it takes no id`);
    }
    const checked = this.check(entry, params);
    if ('error' in checked) return fail('invalid_params', checked.error);
    const value = checked.value;
    try {
      const result = await entry.run(value);
      return id === undefined ? null : { id, result };
    } catch (err) {
      return fail('failed', errorText(err), `"${method}" failed: ${errorText(err)}`);
    }
  }
}
