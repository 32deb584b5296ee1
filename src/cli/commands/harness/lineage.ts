import { assertReader, diffVersions, formatDiff, formatLineage, lineage as readLineage } from '../../../core/harness/lineage';
import { UsageError } from '../../args';
import { flagString, out, type Command } from '../../command';
import { HARNESS_FLAG, JSON_FLAG } from './common';
import { harnessContext } from '../../context';

export const lineage: Command = {
  summary: 'the tree of versions: status, primary metric and delta, target, decision',
  usage: 'evotrainer lineage [--json]',
  flags: {
    reader: { type: 'string', description: 'read path: git (default) or isomorphic-git' },
    ...HARNESS_FLAG,
    ...JSON_FLAG,
  },
  async run(flags, positionals) {
    if (positionals.length) throw new UsageError('lineage takes no arguments');
    const reader = flagString(flags, 'reader');
    const l = await readLineage(await harnessContext(flags).harness(), reader ? assertReader(reader) : undefined);
    out(flags.json ? JSON.stringify(l, null, 2) : formatLineage(l));
    return 0;
  },
};

export const diff: Command = {
  summary: 'what changed between two versions, by file and by config key',
  usage: 'evotrainer diff vA vB',
  flags: { ...HARNESS_FLAG, ...JSON_FLAG },
  async run(flags, positionals) {
    const [a, b, extra] = positionals;
    if (!a || !b || extra) throw new UsageError('diff needs two versions, e.g. `evotrainer diff v2 v5`');
    const d = await diffVersions(await harnessContext(flags).harness(), a, b);
    out(flags.json ? JSON.stringify(d, null, 2) : formatDiff(d));
    return 0;
  },
};
