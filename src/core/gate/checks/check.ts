import type { GateContext } from '../context';
import type { GateCheck } from '../types';

/** One named check of the gate: reads its context, returns its verdicts (none when it does not apply). */
export interface NamedCheck<C = GateContext> {
  name: string;
  run(ctx: C): Promise<GateCheck[]>;
}
