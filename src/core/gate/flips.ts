import type { DuckDBValue } from '@duckdb/node-api';
import { formatLeak, type LeakExample } from '../diagnose/health';
import type { RolloutStore } from '../store/store';

/**
 * Where did the gain come from: the tasks a version flipped from fail to pass against its
 * baseline, and what their trajectories did that the baseline's did not. Behaviour is read
 * from the commands themselves, not from a list of known commands: the programs run (the
 * first word of every command of a pipeline or chain), the hosts of URLs contacted, and the
 * absolute paths touched (by their first two components). A behaviour concentrated in the
 * flips and (nearly) absent from the baseline is how a gain obtained from outside the task
 * looks, whatever the channel; the answer shown before written among the flips is a leak.
 */
export interface FlipBehaviour {
  behaviour: string;
  flips: number;
  baseline: number;
  unflipped: number;
}

export interface FlipAnalysis {
  /** Tasks whose pass rate rose against the baseline. */
  flipped: number;
  /** The credited (correct) trajectories of the flipped tasks, and the other trajectories of each side. */
  flipTrajectories: number;
  baselineTrajectories: number;
  unflippedTrajectories: number;
  /** Behaviour in at least MIN_FLIP_SHARE of the flips and at most MAX_BASELINE_SHARE of the baseline. */
  concentrated: FlipBehaviour[];
  /** The flip trajectories' rollout ids. */
  ids: number[];
  /** Flip trajectories shown their answer before writing it. */
  answerInContext: LeakExample[];
  answerInContextCount: number;
}

/** A behaviour is concentrated when at least half the flips show it, at least MIN_FLIPS of them … */
export const MIN_FLIP_SHARE = 0.5;
export const MIN_FLIPS = 3;
/** … and at most 2% of the baseline's trajectories (one stray use in a small eval is not a pattern). */
export const MAX_BASELINE_SHARE = 0.02;
/** The flips shown their answer that make the gain a leak: this share of the flips, and at least MIN_FLIPS_SHOWN. */
export const MIN_SHOWN_SHARE = 0.2;
export const MIN_FLIPS_SHOWN = 2;

const SEGMENT = /&&|\|\||[;|\n`]|\$\(/;

/** The behaviour tokens of one command: programs, URL hosts, absolute path roots. */
export function behaviourOf(command: string): Set<string> {
  const out = new Set<string>();
  // A here-document's body is data, not commands.
  const script = command.replace(/<<-?\s*(['"]?)(\w+)\1([^\n]*)\n[\s\S]*?\n\s*\2\s*(?=\n|$)/g, '<<$2$3');
  for (const seg of script.split(SEGMENT)) {
    const words = seg.trim().replace(/^[({!\s]+/, '').split(/\s+/);
    let i = 0;
    while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!)) i++; // VAR=value prefixes
    while (i < words.length && /^(sudo|env|timeout|nohup|time|exec|xargs|then|do|else)$/.test(words[i]!)) i++;
    while (i < words.length && /^-|^\d+[smh]?$/.test(words[i]!)) i++; // their flags and durations
    const w = words[i];
    if (!w) continue;
    const prog = (w.split('/').pop() ?? w).replace(/['"]/g, '');
    // python3.11 and python are one program.
    if (/^[A-Za-z][A-Za-z0-9_.+-]*$/.test(prog)) out.add(`runs ${prog.replace(/(?<=[A-Za-z])[\d.]+$/, '')}`);
  }
  for (const m of command.matchAll(/\b[a-z][a-z0-9+.-]*:\/\/([A-Za-z0-9.-]+)/g)) out.add(`contacts ${m[1]!.toLowerCase()}`);
  for (const m of command.matchAll(/(?:^|[\s'"=(<>:])(\/[A-Za-z0-9_.@+-]+)(\/[A-Za-z0-9_.@+-]+)?/g)) out.add(`touches ${m[1]}${m[2] ?? ''}`);
  return out;
}

interface Traj {
  id: number;
  version: string;
  prompt: string;
  correct: boolean;
  tokens: Set<string>;
  shown: LeakExample | null;
}

export interface EvalSide {
  version: string;
  /** A WHERE clause over rollout_features' own columns (steps shares none of them), and its parameters. */
  sql: string;
  params: DuckDBValue[];
}

/**
 * Compares the flipped tasks' credited trajectories with the baseline's and the unflipped
 * ones', in one pass over both sides' trajectories.
 */
export async function analyzeFlips(store: RolloutStore, version: EvalSide, baseline: EvalSide, flipped: Set<string>): Promise<FlipAnalysis> {
  const cond = (w: string) => `(${w.replace(/^\s*where\s+/i, '') || 'true'})`;
  const rows = await store.all<{ id: number; version: string; prompt_id: string; correct: boolean | null; answer_in_context: boolean; answer_turn: number | null; answer_channel: string | null; commands: (string | null)[] | null }>(
    `select f.id, f.version, f.prompt_id, f.correct, f.answer_in_context, f.answer_turn, f.answer_channel,
            list(s.command order by s.turn) filter (where s.command is not null) as commands
     from rollout_features f left join steps s on s.rollout_id = f.id and s.role = 'assistant'
     where ${cond(version.sql)} or ${cond(baseline.sql)}
     group by all order by f.id`,
    [...version.params, ...baseline.params],
  );
  const all: Traj[] = rows.map((r) => {
    const tokens = new Set<string>();
    for (const c of r.commands ?? []) if (c) for (const t of behaviourOf(c)) tokens.add(t);
    const shown = r.answer_in_context ? { rollout: Number(r.id), prompt: r.prompt_id, turn: r.answer_turn, channel: r.answer_channel ?? 'environment message' } : null;
    return { id: Number(r.id), version: r.version, prompt: r.prompt_id, correct: r.correct === true, tokens, shown };
  });
  const mine = all.filter((t) => t.version === version.version);
  const base = all.filter((t) => t.version === baseline.version);
  const flips = mine.filter((t) => t.correct && flipped.has(t.prompt));
  const unflipped = mine.filter((t) => !flipped.has(t.prompt));
  const count = (ts: Traj[], b: string) => ts.reduce((n, t) => n + (t.tokens.has(b) ? 1 : 0), 0);
  const candidates = new Set(flips.flatMap((t) => [...t.tokens]));
  const concentrated: FlipBehaviour[] = [];
  for (const b of candidates) {
    const nf = count(flips, b);
    if (nf < MIN_FLIPS || nf / flips.length < MIN_FLIP_SHARE) continue;
    const nb = count(base, b);
    if (base.length && nb / base.length > MAX_BASELINE_SHARE) continue;
    concentrated.push({ behaviour: b, flips: nf, baseline: nb, unflipped: count(unflipped, b) });
  }
  concentrated.sort((a, b) => b.flips - a.flips || a.behaviour.localeCompare(b.behaviour));
  const shown = flips.flatMap((t) => (t.shown ? [t.shown] : []));
  return {
    flipped: flipped.size,
    flipTrajectories: flips.length,
    ids: flips.map((t) => t.id),
    baselineTrajectories: base.length,
    unflippedTrajectories: unflipped.length,
    concentrated,
    answerInContext: shown.slice(0, 5),
    answerInContextCount: shown.length,
  };
}

/** The flips shown their answer are enough of the gain to call it a leak. */
export function flipsLeak(a: FlipAnalysis): boolean {
  return a.answerInContextCount >= MIN_FLIPS_SHOWN && a.answerInContextCount >= MIN_SHOWN_SHARE * a.flipTrajectories;
}

export function formatFlipBehaviour(a: FlipAnalysis, b: FlipBehaviour): string {
  return `${b.flips} of ${a.flipTrajectories} flips ${b.behaviour.replace(/^(\w+) /, '$1 `')}\`; ${b.baseline} of ${a.baselineTrajectories} baseline trajectories do (${b.unflipped} of ${a.unflippedTrajectories} unflipped)`;
}

export function formatFlipLeaks(a: FlipAnalysis): string {
  return `${a.answerInContextCount} of ${a.flipTrajectories} flips were shown their answer before writing it: ${a.answerInContext.map(formatLeak).join('; ')}`;
}
