import { existsSync } from 'node:fs';
import path from 'node:path';

/** The harness repository containing `from`: the nearest folder with an evotrainer.yaml. */
export function findHarnessRoot(from: string): string | null {
  let dir = path.resolve(from);
  for (;;) {
    if (existsSync(path.join(dir, 'evotrainer.yaml'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}
