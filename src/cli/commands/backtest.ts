import type { Scope } from '../../core/diagnose/health';
import { formatBacktest, recordBacktest, runBacktest } from '../../core/backtest';
import { clusterRunner } from '../../core/backtest/cluster';
import { decideAndApply, formatGate } from '../../core/gate';
import { resolveProfile } from '../../core/jobs';
import { LLM_ENV, openAiChatFromEnv } from '../../core/llm/openai';
import { readWorkingManifest } from '../../core/harness/repo';
import type { Harness } from '../../core/harness/repo';
import type { RolloutStore } from '../../core/store/store';
import { UsageError } from '../args';
import { flagString, out, positiveFlag, versionArg, type Command } from '../command';
import { harnessContext, type HarnessContext } from '../context';
import { HARNESS_FLAG, JSON_FLAG } from './harness/common';

/** `version=v1,split=train,run=R,steps=1:5,limit=1000` */
export function parseSelector(text: string): Scope & { limit?: number } {
  const s: Scope & { limit?: number } = {};
  for (const part of text.split(',').map((x) => x.trim()).filter(Boolean)) {
    const m = /^(version|run|split|steps|limit)=(.+)$/.exec(part);
    if (!m) throw new UsageError(`--rollouts: "${part}" is not KEY=VALUE with KEY one of version, run, split, steps, limit (e.g. --rollouts version=v1,split=train)`);
    const [, k, v] = m as unknown as [string, string, string];
    if (k === 'version' || k === 'run') s[k] = v;
    else if (k === 'split') {
      if (v !== 'train' && v !== 'val') throw new UsageError('--rollouts: split must be train or val');
      s.split = v;
    } else if (k === 'steps') {
      const r = /^(\d+):(\d+)$/.exec(v);
      if (!r) throw new UsageError(`--rollouts: steps must be A:B, got "${v}"`);
      s.steps = [Number(r[1]), Number(r[2])];
    } else {
      if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError('--rollouts: limit must be a positive integer');
      s.limit = Number(v);
    }
  }
  return s;
}

const STORE = { store: { type: 'string', description: 'store file (default: the harness\'s .evotrainer/store.duckdb)' } } as const;

async function withHarnessStore<T>(flags: Record<string, string | boolean>, fn: (h: Harness, store: RolloutStore, ctx: HarnessContext) => Promise<T>): Promise<T> {
  const ctx = harnessContext(flags);
  const h = await ctx.harness();
  return ctx.withStore((store) => fn(h, store, ctx));
}

export const backtest: Command = {
  summary: "replay a version's reward / filter / diagnostics change on cached rollouts (runs the harness's Python; needs --trust)",
  usage: 'evotrainer backtest vN [--against vM] [--rollouts SELECTOR] [--trust] [--json]',
  flags: {
    against: { type: 'string', description: 'baseline version (default: the parent)' },
    rollouts: { type: 'string', description: 'which cached rollouts: version=vM,run=R,split=train|val,steps=A:B,limit=N (default: the baseline\'s)' },
    trust: { type: 'boolean', description: "allow running this harness's own Python code on this machine" },
    python: { type: 'string', description: 'interpreter (default: the manifest\'s python, else python3)' },
    workers: { type: 'string', description: 'worker processes (default: one per core)' },
    timeout: { type: 'string', description: 'per-call limit in seconds (default: the manifest\'s, else 10)' },
    on: { type: 'string', description: 'run it on a cluster profile as a Slurm array job (one task per shard), results merged as if local' },
    shards: { type: 'string', description: 'array tasks for --on (default 4)' },
    'no-record': { type: 'boolean', description: 'do not record the report on the version' },
    ...STORE,
    ...HARNESS_FLAG,
    ...JSON_FLAG,
  },
  async run(flags, positionals) {
    const id = versionArg(positionals, 'backtest');
    const num = (name: string) => positiveFlag(flags, name);
    const selector = flagString(flags, 'rollouts');
    return withHarnessStore(flags, async (h, store, ctx) => {
      const on = flagString(flags, 'on');
      const log = (m: string) => void (flags.json ? undefined : process.stderr.write(`evotrainer: ${m}\n`));
      const runner = on
        ? clusterRunner({
            profile: resolveProfile(readWorkingManifest(h.root).clusters, on),
            harness: h.root,
            version: id,
            shards: num('shards'),
            timeoutSeconds: num('timeout'),
            onJob: (j) => log(`array job ${j.id} (${j.array ?? 1} tasks) on ${on}${j.remoteId ? `: Slurm job ${j.remoteId}` : ''}`),
          })
        : undefined;
      const report = await runBacktest(h, store, {
        runner,
        version: id,
        against: flagString(flags, 'against'),
        selector: selector ? parseSelector(selector) : undefined,
        trust: ctx.trust,
        python: flagString(flags, 'python'),
        workers: num('workers'),
        timeoutSeconds: num('timeout'),
        onProgress: flags.json ? undefined : (m) => process.stderr.write(`evotrainer: ${m}\n`),
      });
      if (!flags['no-record']) await recordBacktest(h, report);
      out(flags.json ? JSON.stringify(report, null, 2) : formatBacktest(report));
      return report.verdict === 'fail' ? 1 : 0;
    });
  },
};

export const gate: Command = {
  summary: 'judge a version: PROMOTE / REJECT / NEEDS-HUMAN with every reason (recorded on the version)',
  usage: 'evotrainer gate vN [--against vM] [--apply] [--audit N] [--json]',
  flags: {
    against: { type: 'string', description: 'baseline (default: the promoted version, else the parent)' },
    apply: { type: 'boolean', description: 'act on the decision: promote on PROMOTE, reject (with the failing reasons) on REJECT' },
    'no-record': { type: 'boolean', description: 'judge only: record nothing (e.g. to compare a decided version with an older one)' },
    audit: { type: 'string', description: `flipped trajectories an LLM judge reads (default 8 when ${LLM_ENV.endpoint} and ${LLM_ENV.model} are set; 0: none)` },
    ...STORE,
    ...HARNESS_FLAG,
    ...JSON_FLAG,
  },
  async run(flags, positionals) {
    const id = versionArg(positionals, 'gate');
    return withHarnessStore(flags, async (h, store) => {
      const sample = flagString(flags, 'audit') === '0' ? 0 : (positiveFlag(flags, 'audit', true) ?? 8);
      const llm = process.env[LLM_ENV.endpoint] && process.env[LLM_ENV.model] && sample > 0;
      const audit = llm ? { model: openAiChatFromEnv(), sample, budget: { maxCalls: sample } } : undefined;
      if (flags['no-record'] && flags.apply) throw new UsageError('--apply needs the decision recorded; drop --no-record');
      const r = await decideAndApply(h, store, { version: id, against: flagString(flags, 'against'), ...(audit ? { audit } : {}), judge: 'eval_rollouts', record: !flags['no-record'], act: flags.apply ? 'decision' : 'none' });
      const report = r.report!;
      const applied = r.applied === 'promoted' ? `${id} promoted; evo/promoted → ${r.entry.commit.slice(0, 12)}` : r.applied === 'rejected' ? `${id} rejected; its branch stays as negative evidence` : '';
      out(flags.json ? JSON.stringify({ ...report, applied: applied || null }, null, 2) : formatGate(report) + (applied ? `\n${applied}` : report.decision === 'needs_human' ? `\nA person decides: \`evotrainer promote ${id} --override "why"\` or \`evotrainer reject ${id} --reason "why"\`` : ''));
      return report.decision === 'promote' ? 0 : report.decision === 'reject' ? 1 : 3;
    });
  },
};
