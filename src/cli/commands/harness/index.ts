import type { Command } from '../../command';

/** Commands over the harness repository (init, version, promote, reject, lineage, diff, skill). */
export const harnessCommands: Record<string, Command> = {};
