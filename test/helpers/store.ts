import { RolloutStore } from '../../src/core/store/store';

/** Opens the store file, runs `fn`, and closes it whatever happens. */
export async function withStore<T>(file: string, fn: (s: RolloutStore) => Promise<T>): Promise<T> {
  const s = await RolloutStore.open(file);
  try {
    return await fn(s);
  } finally {
    s.close();
  }
}
