import * as z from 'zod/mini';
import type { DoctorReport } from '../../core/doctor';
import { IpcCommand, IpcNotification } from '../protocol';

export type { DoctorCheck, DoctorReport, CheckStatus } from '../../core/doctor';

export interface DoctorState {
  status: 'running' | 'done' | 'failed';
  report: DoctorReport | null;
  /** Why the check itself could not run (not a missing tool: those are in the report). */
  error: string | null;
}

/** The doctor webview's whole vocabulary. */
export const DidChangeStateNotification = new IpcNotification<DoctorState>('doctor/didChangeState');
export const RerunCommand = new IpcCommand<void>('doctor/rerun', null);
export const CopyReportCommand = new IpcCommand<{ format: 'json' | 'text' }>('doctor/copyReport', z.strictObject({ format: z.enum(['json', 'text']) }));
/** What the page asks the doctor panel: its method map. */
export const DoctorMethods = { rerun: RerunCommand, copyReport: CopyReportCommand };
