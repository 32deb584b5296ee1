import type { ZodMiniType as ZodType } from 'zod/mini';
import { Explorer } from '../../core/explore/explorer';
import type { ExplorerFilter, ExplorerSort } from '../../core/explore/types';
import type { RolloutStore } from '../../core/store/store';
import type { IpcCommand, IpcMessage, IpcNotification } from '../protocol';
import {
  ExplorerStateNotification,
  MoreTextCommand,
  MoreTextSchema,
  OpenTrajectoryCommand,
  OpenTrajectorySchema,
  PageNotification,
  PAGE_ROWS,
  QueryCommand,
  QuerySchema,
  RefreshExplorerCommand,
  TextNotification,
  TrajectoryNotification,
  type ExplorerState,
  type OpenExplorerArgs,
} from './protocol';

export interface ExplorerBackendOptions {
  /** Opens the rollout store (called again after an idle close). */
  open: () => Promise<RolloutStore>;
  /** The store file, for the header. */
  storeLabel: string | null;
  /** Close the store after this many ms without a request, so imports can write to it (0: keep it open). */
  idleCloseMs?: number;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

interface Handler {
  type: IpcCommand<never>;
  schema: ZodType | null;
  run(params: unknown): Promise<IpcMessage | null>;
}

const DEFAULT_SORT: ExplorerSort = { column: 'id', descending: false };

function message<P>(type: IpcNotification<P>, params: P): IpcMessage<P> {
  return { method: type.method, params };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The failure explorer's host side, with no editor in it: the VS Code panel and
 * `evotrainer view` both answer the webview's commands through it. Requests run one at
 * a time (the store's connection is shared), each answered by one notification.
 */
export class ExplorerBackend {
  private store: RolloutStore | null = null;
  private explorer: Explorer | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private filter: ExplorerFilter = {};
  private sort: ExplorerSort = DEFAULT_SORT;
  readonly handlers: Handler[];

  constructor(private readonly opts: ExplorerBackendOptions) {
    this.handlers = [
      {
        type: QueryCommand as IpcCommand<never>,
        schema: QuerySchema,
        run: async (p) => {
          const q = p as import('./protocol').QueryParams;
          try {
            const ex = await this.ready();
            this.filter = q.filter;
            this.sort = q.sort;
            const page = await ex.page({ filter: q.filter, sort: q.sort, offset: q.offset, limit: q.limit });
            const histogram = q.withHistogram ? await ex.histogram(q.filter) : null;
            return message(PageNotification, { requestId: q.requestId, page, histogram, error: null });
          } catch (err) {
            return message(PageNotification, { requestId: q.requestId, page: null, histogram: null, error: errorText(err) });
          }
        },
      },
      {
        type: OpenTrajectoryCommand as IpcCommand<never>,
        schema: OpenTrajectorySchema,
        run: async (p) => {
          const { requestId, id } = p as { requestId: number; id: number };
          try {
            const trajectory = await (await this.ready()).trajectory(id);
            return message(TrajectoryNotification, { requestId, id, trajectory, error: trajectory ? null : `no rollout with id ${id}` });
          } catch (err) {
            return message(TrajectoryNotification, { requestId, id, trajectory: null, error: errorText(err) });
          }
        },
      },
      {
        type: MoreTextCommand as IpcCommand<never>,
        schema: MoreTextSchema,
        run: async (p) => {
          const q = p as import('./protocol').MoreTextParams;
          try {
            const chunk = await (await this.ready()).more(q.id, q.part, q.offset);
            return message(TextNotification, { requestId: q.requestId, id: q.id, part: q.part, chunk, error: chunk ? null : 'that text is gone (was the store re-imported?)' });
          } catch (err) {
            return message(TextNotification, { requestId: q.requestId, id: q.id, part: q.part, chunk: null, error: errorText(err) });
          }
        },
      },
      {
        type: RefreshExplorerCommand as IpcCommand<never>,
        schema: null,
        run: async () => {
          this.closeStore();
          return message(ExplorerStateNotification, await this.stateNow({ ...this.filter }, this.sort, null));
        },
      },
    ];
  }

  /** Runs one command by name, validated: the answer to send back, or null for an unknown or malformed one. */
  handle(method: string, params: unknown): Promise<IpcMessage | null> {
    const h = this.handlers.find((x) => x.type.method === method);
    if (!h) {
      this.opts.log?.('warn', `[explorer] ignored unknown command "${method.slice(0, 80)}"`);
      return Promise.resolve(null);
    }
    let value = params;
    if (h.schema) {
      const parsed = h.schema.safeParse(params);
      if (!parsed.success) {
        this.opts.log?.('warn', `[explorer] rejected "${method}": ${parsed.error.message}`);
        return Promise.resolve(null);
      }
      value = parsed.data;
    }
    return this.serialize(() => h.run(value));
  }

  /** The state a page opens with: facets, histogram and the first page under the given filter. */
  state(args: OpenExplorerArgs = {}, firstPageRows = PAGE_ROWS): Promise<ExplorerState> {
    const filter: ExplorerFilter = {};
    if (args.failureMode) filter.failureMode = args.failureMode;
    if (args.run) filter.run = args.run;
    if (args.version) filter.version = args.version;
    if (args.step !== undefined) filter.step = args.step;
    return this.serialize(() => this.stateNow(filter, DEFAULT_SORT, args.rolloutId ?? null, firstPageRows));
  }

  private async stateNow(filter: ExplorerFilter, sort: ExplorerSort, openRolloutId: number | null, firstPageRows = PAGE_ROWS): Promise<ExplorerState> {
    const base: ExplorerState = { status: 'ready', store: this.opts.storeLabel, error: null, facets: null, filter, sort, page: null, histogram: [], openRolloutId, openRolloutPosition: null };
    try {
      const ex = await this.ready();
      const facets = await ex.facets();
      if (!facets.rollouts) return { ...base, status: 'empty', facets };
      this.filter = filter;
      this.sort = sort;
      const [page, histogram] = [await ex.page({ filter, sort, offset: 0, limit: firstPageRows }), await ex.histogram(filter)];
      const openRolloutPosition = openRolloutId === null ? null : await ex.position({ filter, sort }, openRolloutId);
      return { ...base, facets, page, histogram, openRolloutPosition };
    } catch (err) {
      this.opts.log?.('error', `[explorer] ${errorText(err)}`);
      return { ...base, status: 'failed', error: errorText(err) };
    }
  }

  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(async () => {
      clearTimeout(this.idleTimer);
      try {
        return await fn();
      } finally {
        if (this.opts.idleCloseMs) this.idleTimer = setTimeout(() => void this.serialize(async () => this.closeStore()), this.opts.idleCloseMs);
      }
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async ready(): Promise<Explorer> {
    if (!this.explorer) {
      this.store = await this.opts.open();
      this.explorer = new Explorer(this.store);
      const ms = await this.explorer.refresh();
      this.opts.log?.('info', `[explorer] indexed the store in ${ms.toFixed(0)} ms`);
    }
    return this.explorer;
  }

  private closeStore(): void {
    this.explorer = null;
    try {
      this.store?.close();
    } catch {
      // already closed
    }
    this.store = null;
  }

  /** Closes the store once the request in progress (if any) is answered. */
  async dispose(): Promise<void> {
    clearTimeout(this.idleTimer);
    this.opts.idleCloseMs = 0;
    await this.queue.then(() => this.closeStore());
  }
}
