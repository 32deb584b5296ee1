import type { NamedCheck } from './check';

/** Without the version's eval rollouts in the store nothing can be judged: a person must import them. */
export const evalRollouts: NamedCheck = {
  name: 'evaluation rollouts',
  async run(ctx) {
    if (ctx.nv) return [];
    return [{ check: 'evaluation rollouts', category: 'evidence', passed: null, detail: `no rollouts of ${ctx.entry.id} in the store; import its eval run (\`evotrainer import DIR --version ${ctx.entry.id}\`)` }];
  },
};
