import { existsSync } from 'node:fs';
import path from 'node:path';
import { manifestThresholds, type ThresholdOverrides } from '../core/diagnose/health';
import { findHarnessRoot } from '../core/harness/locate';
import { MANIFEST_FILE, type Manifest } from '../core/harness/manifest';
import { openHarness, readWorkingManifest, type Harness } from '../core/harness/repo';
import { normalizeDomain, type TaskDomain } from '../core/model';
import { defaultStorePath, RolloutStore } from '../core/store/store';
import { flagString } from './command';

/** Repairs `reconcile` makes (an interrupted operation completed) go to stderr, so --json stays clean. */
export const reportRepair = (message: string): void => void process.stderr.write(`evotrainer: resumed: ${message}\n`);

/**
 * What a command works on, derived once from its flags and the working directory: the
 * harness (--harness, else the one containing the working directory), its manifest, the
 * store, and the user's consent to run harness code (--trust).
 */
export interface HarnessContext {
  /** The harness root: --harness, else the folder with evotrainer.yaml containing the working directory; null when none. */
  readonly root: string | null;
  /** The store file: --store, then $EVOTRAINER_STORE, then the harness's .evotrainer/store.duckdb (the working directory's without a harness). */
  readonly storePath: string;
  /** --trust: running this harness's own code on this machine is allowed. */
  readonly trust: boolean;
  /** The harness as a git repository with its ledger (repairs reported on stderr); an error saying what to do when there is none. */
  harness(): Promise<Harness>;
  /** The working tree's manifest; null without a harness or manifest (a broken one is an error with its place). */
  manifest(): Manifest | null;
  /** The manifest's thresholds (and its gate's leak threshold) over the catalog's defaults. */
  thresholds(): ThresholdOverrides | undefined;
  /** The task domain the manifest declares (null: none, or a manifest `harness check` must report). */
  domain(): TaskDomain | null;
  /** Opens the store for `fn` and closes it after. */
  withStore<T>(fn: (store: RolloutStore) => Promise<T>): Promise<T>;
}

export function harnessContext(flags: Record<string, string | boolean>): HarnessContext {
  const given = flagString(flags, 'harness');
  const root = given ? path.resolve(given) : findHarnessRoot(process.cwd());
  const explicitStore = flagString(flags, 'store') ?? process.env.EVOTRAINER_STORE;
  const storePath = explicitStore ? path.resolve(explicitStore) : defaultStorePath(root ?? process.cwd());
  let manifest: Manifest | null | undefined;
  const ctx: HarnessContext = {
    root,
    storePath,
    trust: flags.trust === true,
    async harness() {
      return { ...(await openHarness(given ?? process.cwd())), onRepair: reportRepair };
    },
    manifest() {
      if (manifest === undefined) manifest = root && existsSync(path.join(root, MANIFEST_FILE)) ? readWorkingManifest(root) : null;
      return manifest;
    },
    thresholds() {
      return manifestThresholds(ctx.manifest());
    },
    domain() {
      try {
        return normalizeDomain(ctx.manifest()?.domain);
      } catch {
        return null;
      }
    },
    async withStore(fn) {
      const store = await RolloutStore.open(storePath);
      try {
        return await fn(store);
      } finally {
        store.close();
      }
    },
  };
  return ctx;
}
