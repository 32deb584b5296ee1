import * as z from 'zod/mini';
import type { CurveSeries } from '../../core/diagnose/curves';
import { IpcCommand, IpcNotification } from '../protocol';

export type { CurvePointRow, CurveSeries } from '../../core/diagnose/curves';

/** A metric to pick: a catalog curve (`entropy`, read under each run's own name for it) or a name a run logged. */
export interface CurveMetricOption {
  name: string;
  /** `entropy (actor/entropy)` for a catalog curve; the logged name otherwise. */
  label: string;
  /** How many runs / versions logged it. */
  series: number;
  catalog: boolean;
}

/** Where a version stands in the ledger: its curve's last step is marked with it. */
export interface VersionMark {
  version: string;
  status: string;
  /** When it was promoted (ISO time), when it was. */
  promotedAt: string | null;
  /** The tip of the promoted line. */
  tip: boolean;
}

/** A series fed from a running job's log, point by point, before anything is imported. */
export interface LiveSeries {
  jobId: string;
  run: string;
  version: string | null;
  /** Every metric the log printed so far, by logged name: [step, value] in the order logged (a resumed step logged again wins). */
  metrics: Record<string, [number, number][]>;
  /** The job is final: no more points will come. */
  done: boolean;
}

export interface CurvesState {
  status: 'loading' | 'ready' | 'empty' | 'failed';
  store: string | null;
  error: string | null;
  metrics: CurveMetricOption[];
  /** The metric shown, and the logged names it is read under (a catalog curve has several). */
  metric: string | null;
  aliases: string[];
  series: CurveSeries[];
  versions: VersionMark[];
  live: LiveSeries[];
}

export interface OpenStepParams {
  run: string;
  version: string | null;
  step: number;
}

/** How "Show Training Curves" may be called. */
export interface OpenCurvesArgs {
  metric?: string;
  /** A job whose log feeds the chart live. */
  jobId?: string;
}

/** The curves webview's whole vocabulary. */
export const CurvesStateNotification = new IpcNotification<CurvesState>('curves/state');
/** Points a followed job log just printed (the whole series so far for that job, bounded). */
export const LiveCurvesNotification = new IpcNotification<LiveSeries>('curves/live');

const name = z.string().check(z.minLength(1), z.maxLength(500));
export const SetCurveMetricCommand = new IpcCommand<{ metric: string }>('curves/setMetric', z.strictObject({ metric: name }));
export const RefreshCurvesCommand = new IpcCommand<void>('curves/refresh', null);
/** Opens the failure explorer filtered to the rollouts dumped at that run, version and step. */
export const OpenStepCommand = new IpcCommand<OpenStepParams>('curves/openStep', z.strictObject({ run: name, version: z.nullable(name), step: z.number().check(z.int()) }));
/** What the page asks the curves panel: its method map. */
export const CurvesMethods = { refresh: RefreshCurvesCommand, setMetric: SetCurveMetricCommand, openStep: OpenStepCommand };
export const OpenCurvesArgsSchema = z.strictObject({ metric: z.optional(name), jobId: z.optional(z.string().check(z.regex(/^[\w.-]{1,100}$/))) });
