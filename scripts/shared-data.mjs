// The real data sets the tests read, beside the checkout (../shared/data), never copied in.
// One place says where they are and what a missing one means, for the test runner and the
// tests themselves.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** @param {string} root the project root */
export function sharedDataPaths(root) {
  const dir = path.resolve(root, '..', 'shared', 'data');
  return {
    dir,
    swe: path.join(dir, 'swe-mini-swe-agent'),
    gsm8k: path.join(dir, 'gsm8k-model-solutions', 'example_model_solutions.dev.jsonl'),
    external: path.join(dir, 'external'),
  };
}

/** The one-line reason the shared data cannot be used, or null when it is there. @param {string} root */
export function sharedDataProblem(root) {
  const p = sharedDataPaths(root);
  const missing = [p.swe, p.gsm8k, p.external].filter((f) => !existsSync(f));
  if (!missing.length) return null;
  return `the shared test data is missing: expected ${missing.join(' and ')} ` +
    `(../shared/data beside the project root; see "Tests" in README.md)`;
}

/** A test file that reads the shared data says so with a top-level `requireSharedData();`. @param {string} file */
export function readsSharedData(file) {
  return /^requireSharedData\(\);$/m.test(readFileSync(file, 'utf8'));
}

/**
 * Without the shared data, the files that read it are not run, and that is one failure
 * naming the path (`failure`) rather than every test in them failing on it.
 * @param {string} root @param {string[]} files
 * @returns {{ run: string[], notRun: string[], failure: string | null }}
 */
export function gateOnSharedData(root, files) {
  const problem = sharedDataProblem(root);
  if (!problem) return { run: files, notRun: [], failure: null };
  const notRun = files.filter(readsSharedData);
  return {
    run: files.filter((f) => !notRun.includes(f)),
    notRun,
    failure: `${problem}; ${notRun.length} test file(s) that read it were not run: ${notRun.map((f) => path.relative(root, f)).join(', ')}`,
  };
}
