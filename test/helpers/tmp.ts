import { mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const made = new Set<string>();
function removeMade(): void {
  for (const d of made) {
    try {
      rmSync(d, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    } catch (err) {
      process.stderr.write(`could not remove the test folder ${d}: ${(err as Error).message}\n`);
    }
  }
}

/**
 * A temp directory removed when the test file's process exits: after every suite's own
 * `after` hooks, so an editor or server a suite started has stopped writing into it.
 */
export function tempDir(prefix = 'evotrainer-test-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  if (!made.size) process.once('exit', removeMade);
  made.add(dir);
  return dir;
}

/** Writes an executable shell script (a real program on PATH, not an in-process fake). */
export function writeScript(dir: string, name: string, body: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

export const repoRoot = path.resolve(__dirname, '..', '..');
