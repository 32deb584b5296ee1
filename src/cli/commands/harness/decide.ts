import { decideAndApply } from '../../../core/gate';
import { rejectVersion } from '../../../core/harness/versions';
import { UsageError } from '../../args';
import { flagString, out, versionArg, type Command } from '../../command';
import { HARNESS_FLAG, JSON_FLAG } from './common';
import { harnessContext } from '../../context';

export const promote: Command = {
  summary: 'run the promotion gate on an evaluated version and move evo/promoted to it',
  usage: 'evotrainer promote vN [--override REASON]',
  flags: {
    override: { type: 'string', description: 'a person promotes despite failing checks; the reason is recorded' },
    ...HARNESS_FLAG,
    ...JSON_FLAG,
  },
  async run(flags, positionals) {
    const id = versionArg(positionals, 'promote');
    const h = await harnessContext(flags).harness();
    const override = flagString(flags, 'override');
    const r = await decideAndApply(h, null, { version: id, judge: 'recorded', act: 'promote', ...(override ? { override } : {}) });
    out(flags.json ? JSON.stringify({ version: r.entry.id, commit: r.entry.commit, decision: r.decision }, null, 2) : [`${id} promoted (${r.decision.decidedBy}); evo/promoted → ${r.entry.commit.slice(0, 12)}`, ...r.decision.reasons.map((x) => `  [${x.passed ? 'ok' : 'FAIL'}] ${x.check}: ${x.detail}`), `Next: distil it into a skill with \`evotrainer skill record --from ${id} --category … --trigger …\``].join('\n'));
    return 0;
  },
};

export const reject: Command = {
  summary: 'reject a version with a reason (its branch stays, as negative evidence)',
  usage: 'evotrainer reject vN --reason TEXT',
  flags: {
    reason: { type: 'string', description: 'why (required; recorded in the ledger)' },
    ...HARNESS_FLAG,
    ...JSON_FLAG,
  },
  async run(flags, positionals) {
    const id = versionArg(positionals, 'reject');
    const reason = flagString(flags, 'reason');
    if (!reason) throw new UsageError('--reason is required: rejected versions are negative evidence, and the reason is what others read');
    const e = await rejectVersion(await harnessContext(flags).harness(), id, reason);
    out(flags.json ? JSON.stringify(e, null, 2) : `${id} rejected; ${e.branch} is kept as negative evidence`);
    return 0;
  },
};
