import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadRubric, runJudge, type JudgeRun } from '../../core/diagnose/judges';
import { LLM_ENV, openAiChatFromEnv } from '../../core/llm/openai';
import { UsageError } from '../args';
import { flagString, out, positiveFlag, type Command } from '../command';
import { harnessContext } from '../context';
import { SCOPE_FLAGS, scopeFromFlags } from '../scope';
import { STORE_FLAG, withStore } from '../store';

export function positiveInt(flags: Record<string, string | boolean>, name: string): number | undefined {
  return positiveFlag(flags, name, true);
}

/** The rubric: a path, or a name under diagnostics/judges/ of the harness here. */
function rubricPath(arg: string): string {
  const direct = path.resolve(arg);
  if (existsSync(direct)) return direct;
  const root = harnessContext({}).root;
  if (root) {
    for (const name of [arg, `${arg}.md`]) {
      const p = path.join(root, 'diagnostics', 'judges', name);
      if (existsSync(p)) return p;
    }
  }
  throw new UsageError(`no rubric "${arg}" (neither a file nor diagnostics/judges/${arg}.md of the harness here)`);
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

function text(r: JudgeRun): string {
  const lines = [`Judge ${r.rubric.name} (${path.relative(process.cwd(), r.rubric.file) || r.rubric.file}, sha256 ${r.rubric.sha256.slice(0, 12)}) with ${r.model} at ${r.endpoint}`, ''];
  lines.push('Sample by stratum (correctness / built-in failure mode):');
  for (const [k, s] of Object.entries(r.strata)) lines.push(`  ${k.padEnd(34)} ${String(s.sampled).padStart(4)} of ${s.population}`);
  lines.push('', `${'rollout'.padEnd(8)} ${'stratum'.padEnd(30)} ${'label'.padEnd(20)} ${'turns cited'.padEnd(14)} explanation`);
  for (const v of r.verdicts) {
    const label = v.error ? 'ERROR' : (v.label ?? '');
    const why = v.error ?? v.explanation;
    lines.push(`${String(v.rolloutId).padEnd(8)} ${clip(v.stratum, 30).padEnd(30)} ${clip(label, 20).padEnd(20)} ${clip(v.citedTurns.join(','), 14).padEnd(14)} ${clip(why.replace(/\s+/g, ' '), 100)}${v.cached ? ' (cached)' : ''}${v.omittedTurns ? ` [${v.omittedTurns} turns omitted]` : ''}`);
  }
  lines.push('', `Labels: ${Object.entries(r.labelCounts).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`);
  lines.push(`${r.calls} call(s), ${r.tokens} tokens, ${r.cacheHits} from the cache, ${r.errors} error(s).`);
  if (r.stopped) lines.push('', `Stopped: ${r.stopped}`);
  return lines.join('\n');
}

export const judge: Command = {
  summary: 'an LLM judge: apply a rubric (diagnostics/judges/*.md) to a stratified sample of trajectories; cached, within a budget',
  usage: 'evotrainer judge --rubric FILE|NAME [--sample N --seed S --run R --version V --endpoint URL --model M --max-calls N --max-tokens N --json]',
  flags: {
    rubric: { type: 'string', description: 'rubric markdown file, or a name under diagnostics/judges/' },
    ...SCOPE_FLAGS,
    sample: { type: 'string', description: 'rollouts to sample (default 20), stratified by correctness × failure mode' },
    seed: { type: 'string', description: 'sampling seed (default 1)' },
    ids: { type: 'string', description: 'judge these rollout ids (comma-separated) instead of sampling' },
    endpoint: { type: 'string', description: `OpenAI-compatible base URL (default $${LLM_ENV.endpoint}); the key comes from $${LLM_ENV.apiKey}` },
    model: { type: 'string', description: `model name (default: the rubric's model, then $${LLM_ENV.model})` },
    'max-calls': { type: 'string', description: 'stop after this many model calls (cached verdicts are free)' },
    'max-tokens': { type: 'string', description: 'stop before the tokens used would exceed this' },
    concurrency: { type: 'string', description: 'calls in flight at once (default 4)' },
    timeout: { type: 'string', description: 'seconds per call attempt (default 60)' },
    json: { type: 'boolean', description: 'print JSON' },
    ...STORE_FLAG,
  },
  async run(flags) {
    const rubricArg = flagString(flags, 'rubric');
    if (!rubricArg) throw new UsageError('name a rubric: --rubric diagnostics/judges/NAME.md');
    const rubric = loadRubric(rubricPath(rubricArg));
    const endpoint = flagString(flags, 'endpoint');
    const modelName = flagString(flags, 'model') ?? rubric.model;
    const timeout = positiveInt(flags, 'timeout');
    const model = openAiChatFromEnv({ ...(endpoint ? { endpoint } : {}), ...(modelName ? { model: modelName } : {}), ...(timeout ? { timeoutMs: timeout * 1000 } : {}) });
    const idsFlag = flagString(flags, 'ids');
    const ids = idsFlag?.split(',').map((s) => {
      if (!/^\d+$/.test(s.trim())) throw new UsageError(`--ids takes rollout ids separated by commas, got "${s}"`);
      return Number(s.trim());
    });
    const seed = flagString(flags, 'seed');
    if (seed !== undefined && !/^-?\d+$/.test(seed)) throw new UsageError(`--seed must be a whole number, got "${seed}"`);
    const maxCalls = positiveInt(flags, 'max-calls');
    const maxTokens = positiveInt(flags, 'max-tokens');
    const sample = positiveInt(flags, 'sample');
    const concurrency = positiveInt(flags, 'concurrency');
    const abort = new AbortController();
    const onSigint = () => abort.abort();
    process.once('SIGINT', onSigint);
    try {
      const result = await withStore(flags, (s) =>
        runJudge(s, rubric, model, {
          scope: scopeFromFlags(flags),
          ...(sample ? { sample } : {}),
          ...(seed !== undefined ? { seed: Number(seed) } : {}),
          ...(ids ? { rolloutIds: ids } : {}),
          budget: { ...(maxCalls ? { maxCalls } : {}), ...(maxTokens ? { maxTokens } : {}) },
          ...(concurrency ? { concurrency } : {}),
          signal: abort.signal,
          onVerdict: flags.json || !process.stderr.isTTY ? undefined : (_v, done, total) => process.stderr.write(`  judged ${done}/${total}\r`),
        }),
      );
      out(flags.json ? JSON.stringify(result, null, 2) : text(result));
      if (result.stopped) {
        process.stderr.write(`evotrainer judge: stopped early: ${result.stopped}\n`);
        return 1;
      }
      return 0;
    } finally {
      process.removeListener('SIGINT', onSigint);
    }
  },
};
