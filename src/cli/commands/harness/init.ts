import { initHarness, listTemplates } from '../../../core/harness/init';
import { UsageError } from '../../args';
import { flagString, out, type Command } from '../../command';
import { JSON_FLAG } from './common';

export const init: Command = {
  summary: 'create a harness repository from a template (git init, v0 promoted)',
  usage: 'evotrainer init [--template NAME|PATH] DIR',
  flags: {
    template: { type: 'string', description: `template under harness-templates/ (default starter)` },
    ...JSON_FLAG,
  },
  async run(flags, positionals) {
    const [dir, extra] = positionals;
    if (!dir || extra) throw new UsageError(`init takes one folder, e.g. \`evotrainer init my-harness\` (templates: ${listTemplates().join(', ')})`);
    const r = await initHarness(dir, flagString(flags, 'template') ?? 'starter');
    if (flags.json) {
      out(JSON.stringify({ root: r.harness.root, commit: r.commit, version: r.entry.id, branch: r.entry.branch, evalPinned: r.evalPinned, notes: r.notes }, null, 2));
      return 0;
    }
    out(
      [
        `Created harness ${r.harness.root}`,
        `  v0 ${r.commit.slice(0, 12)} on main, ${r.entry.branch}; promoted line evo/promoted; evidence on evo/ledger`,
        r.evalPinned ? `  eval set pinned: ${r.evalPinned}` : '',
        ...r.notes.map((n) => `  note: ${n}`),
        '',
        'Next: evotrainer version new --parent v0 --hypothesis "If we change X, Y improves because Z" --target-metric Y --success "Y > N" --layer reward --worktree',
        "Share versions and evidence: git push REMOTE main 'refs/heads/evo/*:refs/heads/evo/*'",
      ]
        .filter(Boolean)
        .join('\n'),
    );
    return 0;
  },
};
