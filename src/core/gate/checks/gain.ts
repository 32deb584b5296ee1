import { metricByName } from '../../diagnose/catalog';
import { formatComparison } from '../../backtest/stats';
import { gitOut } from '../../harness/git';
import { evalWhere, paired } from '../context';
import { analyzeFlips, flipsLeak, formatFlipBehaviour, formatFlipLeaks } from '../flips';
import { auditGain } from '../gainAudit';
import type { NamedCheck } from './check';

/** Where the gain came from: the flipped tasks' behaviour against the baseline's. */
export const flips: NamedCheck = {
  name: 'where the gain came from',
  async run(ctx) {
    if (!paired(ctx) || !ctx.primaryDef) return [];
    const pass = metricByName('pass_rate')!;
    const [cv] = await ctx.perTask([pass], ctx.sv);
    const [cb] = await ctx.perTask([pass], ctx.sb);
    const flipped = new Set([...(cv ?? new Map<string, number>())].filter(([t, v]) => v > (cb?.get(t) ?? Infinity)).map(([t]) => t));
    if (!flipped.size) return [];
    const fa = await analyzeFlips(ctx.store, { version: ctx.sv.version, ...evalWhere(ctx.sv) }, { version: ctx.sb.version, ...evalWhere(ctx.sb) }, flipped);
    ctx.flips = fa;
    const leak = flipsLeak(fa);
    const parts = [...(fa.answerInContextCount ? [formatFlipLeaks(fa)] : []), ...fa.concentrated.slice(0, 5).map((b) => formatFlipBehaviour(fa, b))];
    const base = ctx.baseline.id;
    return [
      {
        check: 'where the gain came from',
        category: 'validity',
        passed: leak ? false : fa.concentrated.length ? null : true,
        detail: leak
          ? `the gain was shown, not found: ${parts.join('; ')}`
          : fa.concentrated.length
            ? `behaviour concentrated in the ${fa.flipped} flipped task(s) and absent from ${base}: ${parts.join('; ')} — a person must judge whether the gain came from outside the task`
            : `${fa.flipped} task(s) flipped fail→pass; no behaviour concentrated in them that ${base} lacks${fa.answerInContextCount ? `; ${formatFlipLeaks(fa)}` : ''}`,
      },
    ];
  },
};

/** An LLM judge reads a sample of the flipped trajectories (when asked for and there are flips). */
export const judgeAudit: NamedCheck = {
  name: 'judge audit',
  async run(ctx) {
    const audit = ctx.options.audit;
    if (!paired(ctx) || !ctx.primaryDef || !audit || !ctx.flips?.ids.length) return [];
    return [(await auditGain(ctx.store, ctx.flips.ids, audit)).check];
  },
};

/** Nothing changed, yet it moved: an empty diff cannot explain a move beyond the interval. */
export const nothingChanged: NamedCheck = {
  name: 'nothing changed, yet it moved',
  async run(ctx) {
    const { entry, primaryName, comparisons } = ctx;
    if (!paired(ctx) || !ctx.primaryDef || !ctx.parent) return [];
    const moved = [...new Set([primaryName, 'pass_rate'])].flatMap((k) => (comparisons[k] && comparisons[k].direction !== 'none' ? [[k, comparisons[k]] as const] : []));
    if (!moved.length || (await gitOut(ctx.h.root, ['diff', '--name-only', entry.base, entry.commit])).trim()) return [];
    return [
      {
        check: 'nothing changed, yet it moved',
        category: 'validity',
        passed: null,
        detail: `${entry.id}'s diff against ${entry.base.slice(0, 10)} is empty, yet ${moved.map(([k, c]) => `${k} ${formatComparison(c)}`).join('; ')} — the evaluation, not the harness, changed (data, seed, environment): a person must judge`,
      },
    ];
  },
};
