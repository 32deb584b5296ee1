import path from 'node:path';
import { sharedDataPaths, sharedDataProblem } from '../../scripts/shared-data.mjs';
import { repoRoot } from './tmp';

/** The shared real data sets, by relative path from the project root (never copied in). */
const paths = sharedDataPaths(repoRoot);
export const sharedData = paths.dir;
export const sweDir = paths.swe;
export const gsm8kFile = paths.gsm8k;
/** Files other projects' tools wrote (SWE-agent, mini-swe-agent 2.x, verifiers), byte for byte; see its README. */
export const externalDir = paths.external;

/**
 * Fails loudly (never skips) when the shared data is not beside the checkout. A test file
 * that reads the data calls it at its top level: the file then fails once, with the path,
 * and the runner (scripts/test.mjs) finds such files by this call and reports the missing
 * data as one failure instead of running them.
 */
export function requireSharedData(): void {
  const problem = sharedDataProblem(repoRoot);
  if (problem) throw new Error(problem);
}

export const GSM8K_MAPPING = {
  prompt: 'question',
  groundTruth: 'ground_truth',
  samples: ['6b_finetuning', '6b_verification', '175b_finetuning', '175b_verification'],
  response: 'solution',
  correct: 'is_correct',
};

export const fixtures = path.join(repoRoot, 'test', 'fixtures', 'importers');
