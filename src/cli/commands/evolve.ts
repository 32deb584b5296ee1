import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { answerGate, evolve, pendingGate, PendingGateError, type GateAnswer, type HumanGate } from '../../core/evolve/loop';
import { LlmProposer, SkillProposer } from '../../core/evolve/proposers';
import { formatLineage, lineage } from '../../core/harness/lineage';
import { readWorkingManifest } from '../../core/harness/repo';
import { resolveProfile } from '../../core/jobs';
import { LLM_ENV, openAiChatFromEnv } from '../../core/llm';
import { RolloutStore } from '../../core/store/store';
import { UsageError } from '../args';
import { flagString, out, positiveFlag, type Command } from '../command';
import { HARNESS_FLAG, JSON_FLAG } from './harness/common';
import { harnessContext } from '../context';

export function parseAnswer(words: string[]): GateAnswer {
  const [a, ...rest] = words;
  const up = (a ?? '').toUpperCase().replace(/:$/, '');
  if (up === 'APPROVE' || up === 'ABORT') return { answer: up };
  if (up === 'REVISE') {
    const feedback = rest.join(' ').trim();
    if (!feedback) throw new UsageError('REVISE needs the feedback, e.g. REVISE "lower the penalty weight"');
    return { answer: 'REVISE', feedback };
  }
  throw new UsageError(`the answer must be APPROVE, REVISE "feedback" or ABORT, not "${words.join(' ')}"`);
}

/** A person at the terminal answers a gate; without one the gate waits in .evotrainer/evolve. */
function terminalAsk(): ((g: HumanGate) => Promise<GateAnswer>) | null {
  if (!process.stdin.isTTY) return null;
  return async (g) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      process.stderr.write(`\n== ${g.gate} gate${g.version ? ` (${g.version})` : ''}: ${g.summary}\n${g.evidence}\n`);
      for (;;) {
        const line = await rl.question('APPROVE / REVISE: feedback / ABORT > ');
        try {
          return parseAnswer(line.replace(/^(\w+):?\s*/, '$1 ').split(' '));
        } catch (e) {
          process.stderr.write(`${(e as Error).message}\n`);
        }
      }
    } finally {
      rl.close();
    }
  };
}

export const evolveCommand: Command = {
  summary: 'run the co-evolution loop: diagnose → propose → backtest → train → gate → promote/reject → skills (resumable)',
  usage: 'evotrainer evolve [--rounds N] [--versions N] [--wall-minutes M] [--gpu-hours H] [--autonomy full|human_gated] [--proposer skill|llm] [--skills DIR] [--profile NAME] --trust\n       evotrainer evolve answer APPROVE | REVISE "feedback" | ABORT\n       evotrainer evolve pending',
  flags: {
    rounds: { type: 'string', description: 'rounds to run (default 3)' },
    versions: { type: 'string', description: 'new versions at most' },
    'wall-minutes': { type: 'string', description: 'stop after this much wall time' },
    'gpu-hours': { type: 'string', description: 'stop after the job records add up to this many GPU-hours' },
    autonomy: { type: 'string', description: 'full, or human_gated (gates after diagnosis, design, backtest, completion); default: the manifest\'s' },
    proposer: { type: 'string', description: `skill (default, no LLM) or llm (OpenAI-compatible: --endpoint/--model or $${LLM_ENV.endpoint}, key in $${LLM_ENV.apiKey})` },
    endpoint: { type: 'string', description: 'LLM endpoint for --proposer llm' },
    model: { type: 'string', description: 'LLM model for --proposer llm' },
    skills: { type: 'string', description: 'another folder of skills to draw from (e.g. a library, or another harness\'s skills/)' },
    profile: { type: 'string', description: 'cluster profile for training jobs (default: the manifest\'s, else local)' },
    trust: { type: 'boolean', description: "allow running this harness's code (backtests, training jobs)" },
    ...HARNESS_FLAG,
    ...JSON_FLAG,
  },
  async run(flags, positionals) {
    const ctx = harnessContext(flags);
    const h = await ctx.harness();
    const [sub, ...rest] = positionals;
    if (sub === 'answer') {
      const g = answerGate(h, parseAnswer(rest));
      out(`answered the ${g.gate} gate${g.version ? ` of ${g.version}` : ''}; rerun \`evotrainer evolve --trust\` to continue`);
      return 0;
    }
    if (sub === 'pending') {
      const g = pendingGate(h);
      out(flags.json ? JSON.stringify(g) : g ? `${g.gate} gate${g.version ? ` of ${g.version}` : ''} waiting since ${g.askedAt}: ${g.summary}\n${g.evidence}` : 'no gate is waiting');
      return 0;
    }
    if (sub) throw new UsageError(`unknown evolve subcommand "${sub}" (answer, pending)`);
    const manifest = readWorkingManifest(h.root);
    const autonomyFlag = flagString(flags, 'autonomy');
    if (autonomyFlag && autonomyFlag !== 'full' && autonomyFlag !== 'human_gated') throw new UsageError('--autonomy must be full or human_gated');
    const autonomy = (autonomyFlag as 'full' | 'human_gated' | undefined) ?? (manifest.autonomy === 'human_gated' ? 'human_gated' : 'full');
    const which = flagString(flags, 'proposer') ?? 'skill';
    if (which !== 'skill' && which !== 'llm') throw new UsageError('--proposer must be skill or llm');
    const endpoint = flagString(flags, 'endpoint');
    const modelName = flagString(flags, 'model');
    const proposer = which === 'llm' ? new LlmProposer(openAiChatFromEnv({ ...(endpoint ? { endpoint } : {}), ...(modelName ? { model: modelName } : {}) })) : new SkillProposer();
    const skillsFlag = flagString(flags, 'skills');
    const skillDirs = [...(skillsFlag ? [path.resolve(skillsFlag)] : []), ...(manifest.skills?.library ? [path.resolve(h.root, manifest.skills.library)] : [])];
    const store = await RolloutStore.open(ctx.storePath);
    const log = (l: string) => void (flags.json ? process.stderr : process.stdout).write(`${l}\n`);
    try {
      const result = await evolve(h, {
        store,
        trust: ctx.trust,
        autonomy,
        proposer,
        skillDirs,
        profile: resolveProfile(manifest.clusters, flagString(flags, 'profile'), manifest.cluster),
        budget: { rounds: positiveFlag(flags, 'rounds', true), versions: positiveFlag(flags, 'versions', true), wallMinutes: positiveFlag(flags, 'wall-minutes'), gpuHours: positiveFlag(flags, 'gpu-hours') },
        ask: terminalAsk(),
        log,
      });
      if (proposer instanceof LlmProposer) for (const r of proposer.refusals) log(`llm proposal refused: ${r}`);
      const l = await lineage(h);
      if (flags.json) out(JSON.stringify({ ...result, lineage: l }, null, 2));
      else out(`\n${formatLineage(l)}`);
      return 0;
    } catch (err) {
      if (err instanceof PendingGateError) {
        process.stderr.write(`evotrainer evolve: ${err.message}\n`);
        return 4;
      }
      throw err;
    } finally {
      store.close();
    }
  },
};
