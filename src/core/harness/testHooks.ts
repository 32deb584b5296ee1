import { renameSync, writeFileSync } from 'node:fs';

/**
 * TEST HOOK for the kill-safety tests, inert unless both variables are set:
 * `EVOTRAINER_TEST_PAUSE_AT=<point>` makes the process stop at that critical point
 * (between two writes of a multi-step operation), write `EVOTRAINER_TEST_PAUSE_FILE`
 * so the test knows it got there, and wait forever for the test's SIGKILL.
 * Points: version-new:after-ledger, version-commit:after-commit, promote:after-ledger,
 * skill-apply:in-throwaway-index, skill-apply:after-ledger, init:before-rename.
 */
export async function testPause(point: string): Promise<void> {
  const at = process.env.EVOTRAINER_TEST_PAUSE_AT;
  const file = process.env.EVOTRAINER_TEST_PAUSE_FILE;
  if (!at || !file || at !== point) return;
  // Written whole, then renamed: the test never reads a half-written file.
  writeFileSync(`${file}.tmp`, `${process.pid} ${point}\n`);
  renameSync(`${file}.tmp`, file);
  await new Promise<never>(() => setInterval(() => undefined, 1 << 30));
}
