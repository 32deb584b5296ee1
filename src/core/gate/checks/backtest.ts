import type { NamedCheck } from './check';

/** The backtest's verdict, when one was recorded on the version. */
export const recordedBacktest: NamedCheck = {
  name: 'backtest',
  async run({ entry }) {
    const bt = [...entry.transitions].reverse().flatMap((t) => t.evidence).find((e) => e.kind === 'backtest');
    if (!bt) return [];
    const data = bt.data as { verdict?: string; reasons?: string[] } | undefined;
    if (data?.verdict === 'fail') return [{ check: 'backtest', category: 'backtest', passed: false, detail: `the recorded backtest failed: ${(data.reasons ?? []).join('; ')}` }];
    return [{ check: 'backtest', category: 'backtest', passed: true, detail: bt.summary }];
  },
};
