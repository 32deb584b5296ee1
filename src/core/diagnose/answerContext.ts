import { classifyCommand, extractBashBlock } from '../store/importers/actions';
import { chatTurns } from '../store/importers/verl';
import { preview } from '../util/text';

/**
 * Answer seen before written: a leak feature that does not depend on how the answer got
 * in. A rollout is flagged when the content it is credited for — the distinctive added
 * lines of its submitted patch (SWE), else the distinctive lines of its reference answer
 * (code tests' expected outputs, a worked math solution) or a non-trivial final answer —
 * appears in what the environment showed the agent (command outputs, tool results,
 * environment messages after the task) before the agent wrote it. The task itself (system
 * and task messages) is not context: an issue that spells out its fix is the task, not a
 * leak. The channel is the command whose output held the answer, and its turn.
 *
 * Thresholds, measured on the 303 real mini-swe-agent trajectories (honest runs):
 * - a line is distinctive when, whitespace collapsed, it is at least MIN_LINE_CHARS long
 *   and holds a word of 3+ letters; import lines, lines the patch removes or keeps as
 *   context (they existed before), and lines of test files (SWE-bench replaces them with
 *   its own) are not;
 * - an observation counts for a line of file F only until the agent first edits F (a
 *   command classified as an edit naming F's base name) or writes the line verbatim:
 *   after that, the agent may be reading back its own work;
 * - the rollout is flagged when at least MIN_SEEN distinctive lines (or all of them, when
 *   the patch has fewer) were seen, making up at least MIN_SHARE of them: an honest agent
 *   reads code around the fix, so one familiar line is common; most of a fix is not.
 */
export const MIN_LINE_CHARS = 16;
export const MIN_SEEN = 2;
export const MIN_SHARE = 0.5;
/** A final answer (no lines to match) counts only from this length: short numbers appear everywhere. */
export const MIN_ANSWER_CHARS = 6;

export interface AnswerInContext {
  /** The 1-based agent turn whose output first showed the answer (0: an environment message before any turn). */
  turn: number;
  /** The command that turn ran, on one line, or "environment message". */
  channel: string;
  seen: number;
  distinctive: number;
  /** One of the lines seen, for the report. */
  example: string;
}

interface Message {
  role: string;
  content: string;
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();
const decodeEntities = (s: string) =>
  s.replace(/&(lt|gt|amp|quot|#39|#x27|apos);/g, (_, e: string) => ({ lt: '<', gt: '>', amp: '&', quot: '"', '#39': "'", '#x27': "'", apos: "'" })[e] ?? _);
const TEST_FILE = /(^|\/)(tests?|testing)\/|(^|\/)(test_[^/]*|[^/]*_tests?\.\w+|conftest\.py)$/;
const IMPORT = /^(import\s|from\s+\S+\s+import\s|#include\b|use\s|require\(|const\s+\S+\s*=\s*require\()/;

function distinctive(line: string): boolean {
  return line.length >= MIN_LINE_CHARS && /[A-Za-z_]{3}/.test(line) && !IMPORT.test(line);
}

/**
 * A piece of the credited answer to look for: a run of added lines of a patch with the
 * unchanged line on either side of it where it lands (a line copied from elsewhere in the
 * repository sits between other lines there; a fix shown whole sits between its own), or
 * one distinctive line of a reference answer, looked for anywhere.
 */
export interface AnswerBlock {
  lines: string[];
  /** Its distinctive lines that did not exist before the patch. */
  fresh: string[];
  /** How many: what the share counts. */
  distinctive: number;
  /** The unchanged lines before it, from the nearest distinctive one (null: none in the hunk). */
  before: string[] | null;
  /** The unchanged lines after it, up to the nearest distinctive one. */
  after: string[] | null;
  /** Base name of the file the block lands in, when the answer is a patch. */
  file: string | null;
}

/** The blocks of added lines of a unified diff, outside test files; those without a distinctive line are left out. */
export function patchAnswerBlocks(patch: string): AnswerBlock[] {
  const blocks: AnswerBlock[] = [];
  const existing = new Set<string>();
  let file: string | null = null;
  let testFile = false;
  // Unchanged lines of the new file since the last distinctive one, in this hunk.
  let context: string[] = [];
  let open: AnswerBlock | null = null;
  // Blocks still collecting the unchanged lines after them, up to a distinctive one.
  let trailing: AnswerBlock[] = [];
  const endHunk = () => {
    if (open) blocks.push(open);
    open = null;
    trailing = [];
    context = [];
  };
  for (const raw of patch.split('\n')) {
    if (raw.startsWith('+++ ')) {
      endHunk();
      const p = raw.slice(4).trim().replace(/^b\//, '');
      file = p.split('/').pop() ?? p;
      testFile = TEST_FILE.test(p);
    } else if (raw.startsWith('--- ') || raw.startsWith('diff --git') || raw.startsWith('@@') || raw.startsWith('\\')) endHunk();
    else if (raw.startsWith('+')) {
      const line = collapse(raw.slice(1));
      if (testFile || !line) continue;
      trailing = [];
      open ??= { lines: [], fresh: [], distinctive: 0, before: context.length ? context : null, after: null, file };
      open.lines.push(line);
    } else if (raw.startsWith('-')) existing.add(collapse(raw.slice(1)));
    else if (raw.startsWith(' ') || raw === '') {
      const line = collapse(raw.slice(1));
      if (!line) continue;
      existing.add(line);
      if (open) {
        blocks.push(open);
        trailing.push(open);
        open = null;
      }
      for (const t of trailing) (t.after ??= []).push(line);
      if (distinctive(line)) {
        trailing = [];
        context = [line];
      } else context = [...context, line];
    }
  }
  endHunk();
  for (const b of blocks) {
    b.fresh = b.lines.filter((l) => distinctive(l) && !existing.has(l));
    b.distinctive = b.fresh.length;
  }
  return blocks.filter((b) => b.distinctive > 0 && (b.before !== null || b.after !== null || b.lines.length >= 2));
}

/** The distinctive lines of a reference answer (test expectations, a worked solution), or the answer itself when it is one non-trivial line. */
export function referenceAnswerBlocks(answer: string): AnswerBlock[] {
  const lines = [...new Set(answer.split('\n').map(collapse).filter(distinctive))];
  const one = collapse(answer);
  const picked = lines.length ? lines : one.length >= MIN_ANSWER_CHARS ? [one] : [];
  return picked.map((l) => ({ lines: [l], fresh: [l], distinctive: 1, before: null, after: null, file: null }));
}

const isDiff = (s: string) => /^(diff --git |--- \S)/m.test(s) && /^\+\+\+ /m.test(s) && /^@@ /m.test(s);

/** The ways one output line may hold a source line: as is, behind a line number (nl, cat -n, grep -n) or a diff marker, or inside HTML markup. */
function variants(line: string): string[] {
  const v = new Set<string>();
  // A fetched HTML page: its text without the markup, entities decoded after the tags are gone.
  if (/<[A-Za-z/!]/.test(line)) v.add(collapse(decodeEntities(line.replace(/<[^>]*>/g, ''))));
  // Entities decoded, and as written (code may hold an entity itself).
  for (const raw of new Set([line, decodeEntities(line)])) {
    const t = raw.trim();
    v.add(collapse(t));
    v.add(collapse(t.replace(/^\d+(?:[:\t -]\s?|$)/, '')));
    v.add(collapse(t.replace(/^[^\s:]+[:-]\d+[:-]/, '')));
    if (/^[+ ]/.test(raw)) v.add(collapse(raw.slice(1)));
  }
  // A blank line, behind a number or a marker or not, is skipped like the patch's blank lines.
  return v.has('') ? [] : [...v];
}

/**
 * The windows of a block that must all appear as consecutive output lines: from the line
 * unchanged lines before it to its first new distinctive line, and from its last one to
 * the unchanged lines after it. Each holds a line the fix brings and the unchanged code
 * beside it where it lands, up to a distinctive line: a copied `continue` is no anchor.
 */
function windows(b: AnswerBlock): string[][] {
  const isNew = (l: string) => b.fresh.includes(l);
  const first = b.lines.findIndex(isNew);
  const last = b.lines.length - 1 - [...b.lines].reverse().findIndex(isNew);
  if (b.before === null && b.after === null) return [b.lines.slice(first, Math.max(last + 1, first + 2))];
  const out: string[][] = [];
  if (b.before !== null) out.push([...b.before, ...b.lines.slice(0, first + 1)]);
  if (b.after !== null) out.push([...b.lines.slice(last), ...b.after]);
  return out;
}

function shows(output: string[][], w: string[]): boolean {
  for (let i = 0; i + w.length <= output.length; i++) if (w.every((x, j) => output[i + j]!.includes(x))) return true;
  return false;
}

/**
 * The values of the arithmetic an agent wrote itself (`print((44 * 78) + 400)`, a
 * calculator call `{"expression": "3*7"}`): an output that shows one of them is the agent
 * computing, not being told. Python's operators on plain numbers; anything else is no value.
 */
export function ownArithmetic(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/[\d.()+\-*/%\s]{3,}/g)) {
    let expr = m[0].trim();
    // The call around it (`print(`…`)`) leaves parentheses unmatched at the ends.
    const count = (c: string) => expr.split(c).length - 1;
    while (expr.endsWith(')') && count(')') > count('(')) expr = expr.slice(0, -1).trim();
    while (expr.startsWith('(') && count('(') > count(')')) expr = expr.slice(1).trim();
    if (!/\d/.test(expr) || !/\d\s*(\*\*|\/\/|[-+*/%])\s*[(\d.-]/.test(expr)) continue;
    const v = evaluate(expr);
    if (v !== null) out.push(v);
  }
  return out;
}

/** A tiny recursive-descent evaluator (+ - * / // % ** and parentheses); null when the text is not one whole expression. */
function evaluate(expr: string): number | null {
  const tokens = expr.match(/\*\*|\/\/|\d+(?:\.\d*)?|\.\d+|[-+*/%()]/g);
  if (!tokens || tokens.join('') !== expr.replace(/\s+/g, '')) return null;
  let i = 0;
  const peek = () => tokens[i];
  const atom = (): number => {
    const t = tokens[i++];
    if (t === '(') {
      const v = sum();
      if (tokens[i++] !== ')') throw new Error('(');
      return v;
    }
    if (t === '-') return -atom();
    if (t === '+') return atom();
    if (t === undefined || !/^[\d.]/.test(t)) throw new Error(String(t));
    return Number(t);
  };
  const power = (): number => {
    const base = atom();
    if (peek() === '**') {
      i++;
      return base ** power();
    }
    return base;
  };
  const product = (): number => {
    let v = power();
    for (let op = peek(); op === '*' || op === '/' || op === '//' || op === '%'; op = peek()) {
      i++;
      const r = power();
      v = op === '*' ? v * r : op === '/' ? v / r : op === '//' ? Math.floor(v / r) : v - r * Math.floor(v / r);
    }
    return v;
  };
  const sum = (): number => {
    let v = product();
    for (let op = peek(); op === '+' || op === '-'; op = peek()) {
      i++;
      v = op === '+' ? v + product() : v - product();
    }
    return v;
  };
  try {
    const v = sum();
    return i === tokens.length && Number.isFinite(v) ? v : null;
  } catch {
    return null;
  }
}

const asNumber = (s: string) => (/^-?[\d,]*\.?\d+$/.test(s) ? Number(s.replace(/,/g, '')) : null);
const near = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

/**
 * The answer was shown to the agent before it wrote it: where enough of it was first
 * shown, or null. `messages` is the trajectory after the task (assistant turns and what
 * answered them).
 */
export function findAnswerInContext(messages: Message[], blocks: AnswerBlock[]): AnswerInContext | null {
  const total = blocks.reduce((a, b) => a + b.distinctive, 0);
  if (!total) return null;
  const written = new Set<AnswerBlock>(); // the agent wrote one of its lines itself
  const edited = new Set<string>(); // files the agent has edited
  const firstSeen = new Map<AnswerBlock, { turn: number; channel: string }>();
  let turn = 0;
  let channel = 'environment message';
  let submitted = false;
  let computed: number[] = []; // what the last assistant turn's own arithmetic evaluates to
  for (const m of messages) {
    const text = typeof m.content === 'string' ? m.content : '';
    if (m.role === 'assistant') {
      turn++;
      const body = collapse(text);
      for (const b of blocks) if (!written.has(b) && b.fresh.some((l) => body.includes(l))) written.add(b);
      const { command, count } = extractBashBlock(text);
      channel = count === 1 && command ? preview(command, 120) : 'environment message';
      // Every fenced block counts for edits (a message may carry several), and the output of
      // a submission shows the agent's own work.
      const commands = [...text.matchAll(/```[^\n]*\n([\s\S]*?)```/g)].map((x) => x[1]!);
      submitted = commands.some((c) => classifyCommand(c) === 'submit');
      computed = ownArithmetic(text);
      for (const c of commands) if (classifyCommand(c) === 'edit') for (const b of blocks) if (b.file && c.includes(b.file)) edited.add(b.file);
      continue;
    }
    if (submitted) continue;
    const output = text
      .split('\n')
      .filter((l) => !/^-(?!--)/.test(l))
      .map(variants)
      .filter((v) => v.length);
    const body = `${collapse(text)}\n${collapse(decodeEntities(text))}`;
    for (const b of blocks) {
      if (firstSeen.has(b) || written.has(b) || (b.file && edited.has(b.file))) continue;
      // A number the agent's own arithmetic just produced (a calculator, `python -c "print(…)"`) is its work.
      const n = b.file === null && b.lines.length === 1 ? asNumber(b.lines[0]!) : null;
      if (n !== null && computed.some((v) => near(v, n))) continue;
      const hit = b.before === null && b.after === null && b.lines.length === 1 ? body.includes(b.lines[0]!) : windows(b).every((w) => shows(output, w));
      if (hit) firstSeen.set(b, { turn, channel });
    }
  }
  const seen = [...firstSeen.keys()].reduce((a, b) => a + b.distinctive, 0);
  if (!seen || seen / total < MIN_SHARE) return null;
  // The channel: the output that showed the most of the answer (the earliest on a tie).
  const byTurn = new Map<number, { turn: number; channel: string; n: number; example: string }>();
  for (const [b, s] of firstSeen) {
    const e = byTurn.get(s.turn) ?? { ...s, n: 0, example: b.fresh[0]! };
    e.n += b.distinctive;
    byTurn.set(s.turn, e);
  }
  const best = [...byTurn.values()].sort((a, b) => b.n - a.n || a.turn - b.turn)[0]!;
  return { turn: best.turn, channel: best.channel, seen, distinctive: total, example: preview(best.example, 100) };
}

/** What a rollout is credited for, as blocks to look for: its submitted patch, else its reference answer. */
export function answerBlocksOf(extractedAnswer: string | null, groundTruth: string | null): AnswerBlock[] {
  if (extractedAnswer && isDiff(extractedAnswer)) return patchAnswerBlocks(extractedAnswer);
  if (groundTruth) return referenceAnswerBlocks(groundTruth);
  return [];
}

/** A rollout's answer-in-context finding from its stored row (null: not flagged or not checkable). */
export function answerInContextOf(row: { response: string | null; response_format: string | null; extracted_answer: string | null; ground_truth: string | null }): AnswerInContext | null {
  if (!row.response) return null;
  let msgs: Message[];
  if (row.response_format === 'turns') {
    let messages: unknown;
    try {
      messages = JSON.parse(row.response);
    } catch {
      return null;
    }
    if (!Array.isArray(messages)) return null;
    msgs = messages.filter((m): m is Message => typeof m === 'object' && m !== null && typeof (m as Message).role === 'string').map((m) => ({ role: m.role, content: typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '') }));
  } else if (row.response.includes('<|im_start|>')) msgs = chatTurns(row.response); // a verl multi-turn transcript
  else return null;
  if (!msgs.some((m) => m.role !== 'assistant')) return null;
  return findAnswerInContext(msgs, answerBlocksOf(row.extracted_answer, row.ground_truth));
}

/** The table the features view joins: one row per multi-turn rollout checked. */
export const ANSWER_CONTEXT_TABLE = 'answer_context';
export const ANSWER_CONTEXT_DDL = (temp: boolean) =>
  `create ${temp ? 'temp ' : ''}table if not exists ${ANSWER_CONTEXT_TABLE} (rollout_id bigint not null, raw_ref varchar not null, answer_in_context boolean not null, answer_turn integer, answer_channel varchar, answer_seen integer, answer_lines integer)`;

/** The features view's answer-in-context columns (answerContext.ts computes them; the store fills the table first (store/derived.ts)). */
export const ANSWER_CONTEXT_COLUMNS = `coalesce(ac.answer_in_context, false) as answer_in_context, ac.rollout_id is not null as answer_checked,
       ac.answer_turn, ac.answer_channel, ac.answer_seen, ac.answer_lines`;
export const ANSWER_CONTEXT_JOIN = `left join ${ANSWER_CONTEXT_TABLE} ac on ac.rollout_id = r.id and ac.raw_ref = r.raw_ref`;
