import type { DoctorReport } from '../../core/doctor';
import type { DoctorState } from '../../viewer/doctor/protocol';
import type { WebviewDescriptor } from '../webviews/host';

/** "EvoTrainer: Check Environment". Its code is not in the engine bundle: the check must run where the store cannot load. */
export const doctorWebview: WebviewDescriptor<DoctorState, void, DoctorReport | null> = {
  id: 'doctor',
  title: () => 'EvoTrainer: Environment',
  load: async () => (await import('../webviews/doctor/doctorPanel')).doctorFeature,
};
