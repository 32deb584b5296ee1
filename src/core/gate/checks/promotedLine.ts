import { git, revParse } from '../../harness/git';
import { PROMOTED_REF } from '../../harness/repo';
import type { GateCheck } from '../types';
import type { RecordedContext } from './recorded';

/** Promotion moves evo/promoted by fast-forward only: the version must descend from its tip. Checked when acting, whatever the decision. */
export async function promotedLine({ h, entry, ledger }: RecordedContext): Promise<GateCheck> {
  const tip = await revParse(h.root, PROMOTED_REF);
  const ff = !tip || (await git(h.root, ['merge-base', '--is-ancestor', tip, entry.commit], { allowFail: true })).code === 0;
  return {
    check: 'promoted line',
    category: 'validity',
    passed: ff,
    detail: ff ? 'fast-forward of evo/promoted' : `${entry.id} does not descend from the promoted ${ledger.promoted?.version ?? 'tip'}; re-apply it on top (\`evotrainer skill apply\` or a new version from ${ledger.promoted?.version})`,
  };
}
