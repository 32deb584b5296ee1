import path from 'node:path';
import { findHarnessRoot } from '../core/harness/locate';
import { defaultStorePath, RolloutStore } from '../core/store/store';
import { flagString } from './command';

export const STORE_FLAG = { store: { type: 'string', description: 'store file (default: .evotrainer/store.duckdb of the harness here)' } } as const;

/** --store, then $EVOTRAINER_STORE, then the harness containing the working directory. */
export function storePath(flags: Record<string, string | boolean>): string {
  const explicit = flagString(flags, 'store') ?? process.env.EVOTRAINER_STORE;
  if (explicit) return path.resolve(explicit);
  return defaultStorePath(findHarnessRoot(process.cwd()) ?? process.cwd());
}

export async function withStore<T>(flags: Record<string, string | boolean>, fn: (store: RolloutStore) => Promise<T>): Promise<T> {
  const store = await RolloutStore.open(storePath(flags));
  try {
    return await fn(store);
  } finally {
    store.close();
  }
}
