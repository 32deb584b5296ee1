import { statSync } from 'node:fs';

/**
 * The store file's write stamp: modification time and size of the file and of its
 * write-ahead log. Whatever writes the store (an import, a derived view) changes it; null
 * when there is no store file.
 */
export function storeStamp(file: string): string | null {
  let st;
  try {
    st = statSync(file);
  } catch {
    return null;
  }
  let wal = '';
  try {
    const w = statSync(`${file}.wal`);
    wal = `:${w.mtimeMs}:${w.size}`;
  } catch {
    // no write-ahead log: the file is all there is
  }
  return `${st.mtimeMs}:${st.size}${wal}`;
}
