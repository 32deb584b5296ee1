export { formatBacktest, loadCachedRollouts, recordBacktest, runBacktest, type BacktestKind, type BacktestOptions, type BacktestReport, type CallRunner } from './backtest';
export { scoreFromStore } from './inputs';
export { BacktestError, WorkerPool, type CallResult, type FunctionSpec, type PoolOptions } from './pool';
export { computeStats, formatStats, type BacktestStats, type ScoredRollout } from './report';
export { comparePaired, formatComparison, pairedBootstrap, permutationTest, type PairedComparison } from './stats';
