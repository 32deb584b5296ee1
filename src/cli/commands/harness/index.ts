import type { Command } from '../../command';
import { promote, reject } from './decide';
import { init } from './init';
import { diff, lineage } from './lineage';
import { schema } from './schema';
import { skill } from './skill';
import { version } from './version';

/** Commands over the harness repository (init, version, promote, reject, lineage, diff, skill). */
export const harnessCommands: Record<string, Command> = { init, version, promote, reject, lineage, diff, skill, schema };
