import { existsSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './tmp';

/** The shared real data sets, by relative path from the project root (never copied in). */
export const sharedData = path.resolve(repoRoot, '..', 'shared', 'data');
export const sweDir = path.join(sharedData, 'swe-mini-swe-agent');
export const gsm8kFile = path.join(sharedData, 'gsm8k-model-solutions', 'example_model_solutions.dev.jsonl');
/** Files other projects' tools wrote (SWE-agent, mini-swe-agent 2.x, verifiers), byte for byte; see its README. */
export const externalDir = path.join(sharedData, 'external');

/** Fails loudly (never skips) when the shared data is not beside the checkout. */
export function requireSharedData(): void {
  if (!existsSync(sweDir) || !existsSync(gsm8kFile) || !existsSync(externalDir)) {
    throw new Error(`the shared test data is missing: expected ${sharedData} (../shared/data beside the project root)`);
  }
}

export const GSM8K_MAPPING = {
  prompt: 'question',
  groundTruth: 'ground_truth',
  samples: ['6b_finetuning', '6b_verification', '175b_finetuning', '175b_verification'],
  response: 'solution',
  correct: 'is_correct',
};

export const fixtures = path.join(repoRoot, 'test', 'fixtures', 'importers');
