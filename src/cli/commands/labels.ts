import path from 'node:path';
import { scoreLabels, type ClassifierScore, type LabelScoreReport } from '../../core/diagnose/labels';
import { UsageError } from '../args';
import { out, type Command } from '../command';
import { harnessContext } from '../context';
import { STORE_FLAG } from '../store';
import { SCOPE_FLAGS, scopeFromFlags } from '../scope';

const pct = (x: number | null) => (x === null ? '—' : `${(x * 100).toFixed(1)}%`);

function classifierText(c: ClassifierScore): string[] {
  const head = `${c.classifier}${c.model ? ` (${c.model})` : ''}: ${c.n} labelled rollout(s) compared, accuracy ${pct(c.accuracy)}, macro-F1 ${pct(c.macroF1)}`;
  if (!c.n) return [head];
  const rows = [head, `  ${'class'.padEnd(24)} ${'precision'.padStart(9)} ${'recall'.padStart(8)} ${'F1'.padStart(8)}   human / predicted`];
  for (const k of c.classes) rows.push(`  ${k.label.padEnd(24)} ${pct(k.precision).padStart(9)} ${pct(k.recall).padStart(8)} ${pct(k.f1).padStart(8)}   ${k.support} / ${k.predicted}`);
  return rows;
}

function text(r: LabelScoreReport, root: string): string {
  if (!r.files.length) return `No labels: add JSONL files under ${path.join(root, 'labels')} ({"rollout_ref": …, "failure_mode": …, "note": …, "labeler": …, "at": …}).`;
  const lines = [`${r.labels} label(s) in ${r.files.length} file(s); ${r.labelledRollouts} rollout(s) labelled`, ''];
  for (const c of r.classifiers) lines.push(...classifierText(c), '');
  if (r.problems.length) {
    lines.push(`${r.problems.length} problem(s):`);
    for (const p of r.problems) lines.push(`  ${p.file}${p.line !== undefined ? `:${p.line}` : ''}: ${p.message}`);
  }
  return lines.join('\n').trimEnd();
}

export const labels: Command = {
  summary: 'labels score: precision and recall of the failure-mode classifiers and of each judge against human labels (labels/*.jsonl)',
  usage: 'evotrainer labels score [--harness DIR] [--run R --version V] [--json]',
  flags: {
    harness: { type: 'string', description: 'harness repo (default: the one containing the working directory)' },
    ...SCOPE_FLAGS,
    json: { type: 'boolean', description: 'print JSON' },
    ...STORE_FLAG,
  },
  async run(flags, [sub]) {
    if (sub !== 'score') throw new UsageError('use `labels score`');
    const ctx = harnessContext(flags);
    const root = ctx.root ?? process.cwd();
    const report = await ctx.withStore((s) => scoreLabels(s, root, scopeFromFlags(flags)));
    out(flags.json ? JSON.stringify(report, null, 2) : text(report, root));
    return 0;
  },
};
