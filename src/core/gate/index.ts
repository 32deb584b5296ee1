export { decideAndApply, promoteVersion, type DecideOptions, type DecideResult, type GateAction } from './apply';
export { parseCriterion, type Criterion } from './criterion';
export { HONEST_SUFFIX } from './context';
export { EVIDENCE_CHECKS, formatGate, gateDecision, GateError, judgeRecorded, RECORDED_CHECKS, recordedDecision, recordGate, rejectionReason, runGate } from './gate';
export type { GateBasis, GateCategory, GateCheck, GateOptions, GateReport } from './types';
