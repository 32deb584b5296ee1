import { Explorer } from '../../core/explore/explorer';
import type { ExplorerFilter, ExplorerSort } from '../../core/explore/types';
import type { RolloutStore } from '../../core/store/store';
import type { HostMethods } from '../protocol';
import { errorText, type ViewerLog } from '../transport';
import { PAGE_ROWS, type ExplorerMethods, type ExplorerState, type OpenExplorerArgs } from './protocol';

export interface ExplorerBackendOptions {
  /** Opens the rollout store (called again after an idle close). */
  open: () => Promise<RolloutStore>;
  /** The store file, for the header. */
  storeLabel: string | null;
  /** Close the store after this many ms without a request, so imports can write to it (0: keep it open). */
  idleCloseMs?: number;
  /**
   * The store's write stamp now (see storeStamp): with it, `refreshIfChanged` tells whether
   * something else wrote the store since this backend last closed it.
   */
  stamp?: () => string | null;
  log?: ViewerLog;
}

const DEFAULT_SORT: ExplorerSort = { column: 'id', descending: false };

/**
 * The failure explorer's host side, with no editor in it: the VS Code panel and
 * `evotrainer view` both serve its method map through a `HostTransport`. Requests run
 * one at a time (the store's connection is shared).
 */
export class ExplorerBackend {
  private store: RolloutStore | null = null;
  private explorer: Explorer | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private filter: ExplorerFilter = {};
  private sort: ExplorerSort = DEFAULT_SORT;
  /** The store's write stamp when this backend last closed it (undefined: not closed since it read it). */
  private closedStamp: string | null | undefined;
  private stopReleaseWatch: (() => void) | undefined;

  constructor(private readonly opts: ExplorerBackendOptions) {}

  /** The explorer's one method map: what the page may ask, each answered (or failed) in turn. */
  readonly methods: HostMethods<typeof ExplorerMethods> = {
    query: (q) =>
      this.serialize(async () => {
        const ex = await this.ready();
        const page = await ex.page({ filter: q.filter, sort: q.sort, offset: q.offset, limit: q.limit });
        const histogram = q.withHistogram ? await ex.histogram(q.filter) : null;
        // A refresh keeps the last filter that could be read.
        this.filter = q.filter;
        this.sort = q.sort;
        return { page, histogram };
      }),
    openTrajectory: ({ id }) =>
      this.serialize(async () => {
        const trajectory = await (await this.ready()).trajectory(id);
        if (!trajectory) throw new Error(`no rollout with id ${id}`);
        return trajectory;
      }),
    moreText: ({ id, part, offset }) =>
      this.serialize(async () => {
        const chunk = await (await this.ready()).more(id, part, offset);
        if (!chunk) throw new Error('that text is gone (was the store re-imported?)');
        return chunk;
      }),
    refresh: () =>
      this.serialize(() => {
        this.closeStore();
        return this.stateNow({ ...this.filter }, this.sort, null);
      }),
  };

  /** Closes the store (once the request in progress is answered), so that another process may write it meanwhile. */
  release(): Promise<void> {
    return this.serialize(async () => this.closeStore());
  }

  /**
   * The state under the last filter and sort, read again, when something else wrote the
   * store since this backend closed it (an import while its page was hidden); null when
   * what the page shows is still the store as it is.
   */
  refreshIfChanged(): Promise<ExplorerState | null> {
    return this.serialize(async () => {
      if (this.store || this.closedStamp === undefined || !this.opts.stamp || this.opts.stamp() === this.closedStamp) return null;
      return this.stateNow({ ...this.filter }, this.sort, null);
    });
  }

  /** The state a page opens with: facets, histogram and the first page under the given filter. */
  state(args: OpenExplorerArgs = {}, firstPageRows = PAGE_ROWS): Promise<ExplorerState> {
    const filter: ExplorerFilter = {};
    if (args.failureMode) filter.failureMode = args.failureMode;
    if (args.run) filter.run = args.run;
    if (args.version) filter.version = args.version;
    if (args.step !== undefined) filter.step = args.step;
    return this.serialize(() => this.stateNow(filter, DEFAULT_SORT, args.rolloutId ?? null, firstPageRows, args.rolloutId === undefined ? null : (args.turn ?? null)));
  }

  private async stateNow(filter: ExplorerFilter, sort: ExplorerSort, openRolloutId: number | null, firstPageRows = PAGE_ROWS, openRolloutTurn: number | null = null): Promise<ExplorerState> {
    const base: ExplorerState = { status: 'ready', store: this.opts.storeLabel, error: null, facets: null, filter, sort, page: null, histogram: [], openRolloutId, openRolloutPosition: null, openRolloutTurn };
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
      // Another process waiting for the store (an import) gets it at once, not after the idle close.
      this.stopReleaseWatch = this.store.onReleaseRequest(() => {
        this.opts.log?.('info', '[explorer] another process asked for the store: closing it until the next request');
        void this.serialize(async () => this.closeStore());
      });
      this.explorer = new Explorer(this.store);
      const ms = await this.explorer.refresh();
      this.opts.log?.('info', `[explorer] indexed the store in ${ms.toFixed(0)} ms`);
    }
    return this.explorer;
  }

  private closeStore(): void {
    const wasOpen = this.store !== null;
    this.stopReleaseWatch?.();
    this.stopReleaseWatch = undefined;
    this.explorer = null;
    try {
      this.store?.close();
    } catch {
      // already closed
    }
    this.store = null;
    // Taken after the close: what this backend wrote (derived views, a checkpoint) is not a change.
    if (wasOpen) this.closedStamp = this.opts.stamp?.();
  }

  /** Closes the store once the request in progress (if any) is answered. */
  async dispose(): Promise<void> {
    clearTimeout(this.idleTimer);
    this.opts.idleCloseMs = 0;
    await this.queue.then(() => this.closeStore());
  }
}
