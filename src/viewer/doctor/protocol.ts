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
export const RerunCommand = new IpcCommand<void>('doctor/rerun');
export const CopyReportCommand = new IpcCommand<{ format: 'json' | 'text' }>('doctor/copyReport');
