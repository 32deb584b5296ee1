import { completeLines, MAX_LINE_BYTES, plainText } from './lines';
import type { CurveItem, CurvePoint, CurveReader } from './types';

/**
 * verl's console logger (`trainer.logger=['console']`): one line per training step, as
 * `verl.utils.logger.aggregate_logger.concat_dict_to_str` writes it —
 * `step:12 - actor/entropy:0.412 - critic/score/mean:0.531 - …` — printed inside a Ray
 * actor, so the job log shows it behind a prefix like `(TaskRunner pid=2417)` or
 * `(main_task pid=88, ip=10.0.0.3)`, often in colour. Values come as `0.412`,
 * `np.float64(0.412)`, `np.int64(3)`, `tensor(0.41, device='cuda:0')`, `nan`, `inf`,
 * `True`. Everything else in the log (progress bars, prints, warnings, tracebacks) is
 * passed over; a resumed run repeats steps, and the last value logged for a step wins.
 */
const STEP_LINE = /^step:(\d+)(?: - (.*))?$/;
/** Ray's actor prefix, possibly repeated (`(TaskRunner pid=1) (WorkerDict pid=2)`), and a bracketed time stamp. */
const RAY_PREFIX = /^\s*(?:\([A-Za-z_][\w.-]*(?: pid=\d+)?(?:, ip=[^)]*)?\)\s*|\[\d{4}-\d\d-\d\d[ T][\d:.,]+\]\s*)+/;
const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;
const WRAPPED = /^(?:np\.|numpy\.)?(?:float|int|uint)(?:16|32|64|128)?\((.*)\)$|^tensor\(([^,]*)(?:,.*)?\)$/;

/** A console value as a number; undefined when it is not one. */
export function consoleValue(raw: string): number | undefined {
  let s = raw.trim();
  const w = WRAPPED.exec(s);
  if (w) s = (w[1] ?? w[2] ?? '').trim();
  if (NUMBER.test(s)) return Number(s);
  switch (s.toLowerCase()) {
    case 'nan':
    case '-nan':
      return NaN;
    case 'inf':
    case '+inf':
    case 'infinity':
      return Infinity;
    case '-inf':
    case '-infinity':
      return -Infinity;
    case 'true':
      return 1;
    case 'false':
      return 0;
  }
  return undefined;
}

/** The step and values of one physical log line; null when it is not a step line; `bad` lists the pairs that were not `key:number`. */
export function parseConsoleLine(text: string): { step: number; values: [string, number][]; bad: string[] } | null {
  // A progress bar redraws with carriage returns: the step line is the last segment that is one.
  const segments = text.split('\r');
  for (let i = segments.length - 1; i >= 0; i--) {
    const m = STEP_LINE.exec(plainText(segments[i]!).replace(RAY_PREFIX, '').trimEnd());
    if (!m) continue;
    const values: [string, number][] = [];
    const bad: string[] = [];
    for (const pair of (m[2] ?? '').split(' - ')) {
      if (!pair.trim()) continue;
      const colon = pair.indexOf(':');
      const v = colon > 0 ? consoleValue(pair.slice(colon + 1)) : undefined;
      if (v === undefined) bad.push(pair.length > 80 ? `${pair.slice(0, 80)}…` : pair);
      else values.push([pair.slice(0, colon).trim(), v]);
    }
    return { step: Number(m[1]), values, bad };
  }
  return null;
}

const HEAD_STEP = /(?:^|[\r\n]|\)\s|\x1b\[0m\s?)step:\d+ - [^\s:]+:\S/;

export const verlConsoleReader: CurveReader = {
  format: 'verl-console',
  description: "verl's console log (job log, stdout of main_ppo): `step:N - key:value - …` lines",
  matches(_file, head) {
    return HEAD_STEP.test(head);
  },
  async *read(file, { startOffset, startLine, onChunk }): AsyncGenerator<CurveItem> {
    for await (const l of completeLines(file, startOffset, startLine, onChunk)) {
      const parsed = parseConsoleLine(l.text);
      if (!parsed) {
        if (l.cut && l.text.includes('step:')) yield { bad: `a line longer than ${MAX_LINE_BYTES} bytes; its metrics were not read`, at: { line: l.line, endOffset: l.endOffset } };
        continue;
      }
      // A cut line's last value may itself be cut short: only the pairs before it are whole.
      const whole = l.cut ? parsed.values.slice(0, -1) : parsed.values;
      const points: CurvePoint[] = whole.map(([metric, value]) => ({ step: parsed.step, metric, value, wallTime: null }));
      if (points.length) yield { points, at: { line: l.line, endOffset: l.endOffset } };
      if (parsed.bad.length || l.cut) {
        const what = parsed.bad.length ? `not key:number: ${parsed.bad.slice(0, 3).map((b) => JSON.stringify(b)).join(', ')}${parsed.bad.length > 3 ? ` and ${parsed.bad.length - 3} more` : ''}` : `the line is longer than ${MAX_LINE_BYTES} bytes; its end was not read`;
        yield { bad: `step ${parsed.step}: ${what}${points.length ? ` (the line's other ${points.length} value(s) were read)` : ''}`, at: { line: l.line, endOffset: l.endOffset } };
      }
    }
  },
};
