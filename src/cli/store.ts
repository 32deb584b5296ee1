import type { RolloutStore } from '../core/store/store';
import { harnessContext } from './context';

export const STORE_FLAG = { store: { type: 'string', description: 'store file (default: .evotrainer/store.duckdb of the harness here)' } } as const;

/** --store, then $EVOTRAINER_STORE, then the harness's (see harnessContext). */
export function storePath(flags: Record<string, string | boolean>): string {
  return harnessContext(flags).storePath;
}

export function withStore<T>(flags: Record<string, string | boolean>, fn: (store: RolloutStore) => Promise<T>): Promise<T> {
  return harnessContext(flags).withStore(fn);
}
