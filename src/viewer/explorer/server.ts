import { FAILURE_MODES } from '../../core/diagnose/failureModes';
import { RolloutStore } from '../../core/store/store';
import { startViewerServer, type ViewerServer } from '../http';
import { HostTransport } from '../transport';
import { curvesPage } from '../curves/server';
import type { VersionMark } from '../curves/protocol';
import { ExplorerBackend } from './backend';
import { ExplorerMethods, PAGE_ROWS, type OpenExplorerArgs } from './protocol';

export interface ExplorerServer extends ViewerServer {
  backend: ExplorerBackend;
}

export interface ExplorerServerOptions {
  /** The rollout store file (opened on the first request, closed after a minute idle so imports can write). */
  storeFile: string;
  port?: number;
  assetsDir?: string;
  log?: (message: string) => void;
  /** The ledger's versions, which the training curves (at `curves/`) mark with their standing; none by default. */
  versions?: () => Promise<VersionMark[]>;
}

/** Query parameters of the page URL: the same optional arguments as the editor command. */
function pageArgs(params: URLSearchParams): OpenExplorerArgs {
  const args: OpenExplorerArgs = {};
  const mode = params.get('failureMode');
  if (mode && (FAILURE_MODES as readonly string[]).includes(mode)) args.failureMode = mode;
  const run = params.get('run');
  if (run) args.run = run.slice(0, 500);
  const version = params.get('version');
  if (version) args.version = version.slice(0, 500);
  const step = params.get('step');
  if (step && /^-?\d{1,9}$/.test(step)) args.step = Number(step);
  const rollout = params.get('rollout');
  if (rollout && /^\d{1,15}$/.test(rollout)) args.rolloutId = Number(rollout);
  return args;
}

/**
 * `evotrainer view`: the failure explorer in a browser, over the same backend and method
 * map as the editor's panel (and the training curves beside it, at `curves/`).
 * `?baseline=N` opens a non-virtualized table of the first N rows (the benchmark's baseline).
 */
export async function startExplorerServer(opts: ExplorerServerOptions): Promise<ExplorerServer> {
  const log = (level: string, m: string) => opts.log?.(`${level}: ${m}`);
  const backend = new ExplorerBackend({ open: () => RolloutStore.open(opts.storeFile), storeLabel: opts.storeFile, idleCloseMs: 60_000, log });
  const server = await startViewerServer({
    pages: {
      '': {
        app: 'explorer',
        title: 'EvoTrainer: Failures',
        transport: new HostTransport('explorer', log).serve(ExplorerMethods, backend.methods),
        initialState: async (query) => {
          const baseline = Number(query.get('baseline') ?? 0);
          const firstRows = Number.isInteger(baseline) && baseline > 0 ? Math.min(baseline, 100_000) : PAGE_ROWS;
          const state = await backend.state(pageArgs(query), firstRows);
          if (firstRows !== PAGE_ROWS) state.baselineRows = firstRows;
          return state;
        },
      },
      curves: curvesPage({ storeFile: opts.storeFile, versions: opts.versions ?? (async () => []), log }),
    },
    command: 'evotrainer view',
    port: opts.port,
    assetsDir: opts.assetsDir,
    log: opts.log,
  });
  return { ...server, backend };
}
