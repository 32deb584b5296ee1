/** A success criterion a machine can check: `metric op number`, e.g. `dead_group_ratio < 0.30`. */
export interface Criterion {
  metric: string;
  op: '<' | '<=' | '>' | '>=' | '==';
  value: number;
}

export function parseCriterion(text: string): Criterion | null {
  const m = /^\s*([A-Za-z_][\w.@-]*)\s*(<=|>=|==|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/.exec(text);
  return m ? { metric: m[1]!, op: m[2] as Criterion['op'], value: Number(m[3]) } : null;
}

export function compare(a: number, op: string, b: number): boolean {
  return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : op === '>=' ? a >= b : a === b;
}

/** Whether a whole interval satisfies the criterion (true), none of it does (false), or it straddles (null: within noise). */
export function intervalMeets(lo: number, hi: number, c: Criterion): boolean | null {
  const all = compare(lo, c.op, c.value) && compare(hi, c.op, c.value);
  const none = !compare(lo, c.op, c.value) && !compare(hi, c.op, c.value);
  return all ? true : none ? false : null;
}
