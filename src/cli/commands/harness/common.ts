import { openHarness, type Harness } from '../../../core/harness/repo';
import type { FlagSpec } from '../../args';
import { flagString } from '../../command';

export const HARNESS_FLAG: FlagSpec = {
  harness: { type: 'string', description: 'harness repository (default: the current folder)' },
};

export const JSON_FLAG: FlagSpec = {
  json: { type: 'boolean', description: 'print JSON' },
};

/** Repairs `reconcile` makes (an interrupted operation completed) go to stderr, so --json stays clean. */
export const reportRepair = (message: string): void => void process.stderr.write(`evotrainer: resumed: ${message}\n`);

export async function harnessOf(flags: Record<string, string | boolean>): Promise<Harness> {
  return { ...(await openHarness(flagString(flags, 'harness') ?? process.cwd())), onRepair: reportRepair };
}
