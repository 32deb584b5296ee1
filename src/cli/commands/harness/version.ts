import { readLedger, requireEntry } from '../../../core/harness/ledger';
import { addWorktree, advanceVersion, attachEvidence, commitVersion, LAYERS, newVersion, parseMetrics } from '../../../core/harness/versions';
import type { Layer, VersionStatus } from '../../../core/model';
import { UsageError } from '../../args';
import { flagString, out, type Command } from '../../command';
import { HARNESS_FLAG, JSON_FLAG } from './common';
import { harnessContext } from '../../context';

const need = (flags: Record<string, string | boolean>, name: string, why: string): string => {
  const v = flagString(flags, name);
  if (v === undefined) throw new UsageError(`--${name} is required (${why})`);
  return v;
};

const versionArg = (v: string | undefined, sub: string): string => {
  if (!v || !/^v\d+$/.test(v)) throw new UsageError(`version ${sub} needs a version id like v3`);
  return v;
};

export const version: Command = {
  summary: 'create a version, commit its intervention, advance its lifecycle, show it',
  usage: [
    'evotrainer version new --parent vN --hypothesis TEXT --target-metric NAME --success "METRIC OP VALUE" --layer LAYER [--factor PATH[:key]] [--worktree]',
    '       evotrainer version commit vN [--message TEXT] [--factor PATH[:key]] [--override-single-factor REASON]',
    '       evotrainer version advance vN backtested|training|evaluated [--backtest FILE] [--health FILE] [--metrics k=v,…] [--job ID] [--summary TEXT]',
    '       evotrainer version evidence vN [--metrics k=v,…] [--health FILE] [--summary TEXT]   (no transition; e.g. the baseline v0)',
    '       evotrainer version show vN | evotrainer version worktree vN',
  ].join('\n'),
  flags: {
    parent: { type: 'string', description: 'new: the version to branch from (vN)' },
    hypothesis: { type: 'string', description: 'new: "If we change X, Y improves because Z"' },
    'target-metric': { type: 'string', description: 'new: the metric expected to move' },
    success: { type: 'string', description: 'new: falsifiable criterion, e.g. "dead_group_ratio < 0.30"' },
    layer: { type: 'string', description: `new: ${LAYERS.join(' | ')}` },
    because: { type: 'string', description: 'new: the mechanism (Z)' },
    factor: { type: 'string', description: 'new/commit: the one factor, PATH or PATH:key.prefix' },
    slug: { type: 'string', description: 'new: branch slug (default from the hypothesis)' },
    worktree: { type: 'boolean', description: 'new: check the version out under .evotrainer/worktrees/vN' },
    message: { type: 'string', description: 'commit: subject line (default the hypothesis)' },
    'override-single-factor': { type: 'string', description: 'commit: record why a multi-unit change is one factor' },
    backtest: { type: 'string', description: 'advance: backtest summary file (JSON/markdown)' },
    health: { type: 'string', description: 'advance: health report summary file' },
    metrics: { type: 'string', description: 'advance: NAME=VALUE,… (evaluated needs the primary metric)' },
    job: { type: 'string', description: 'advance: training job id' },
    summary: { type: 'string', description: 'advance: one-line evidence summary' },
    ...HARNESS_FLAG,
    ...JSON_FLAG,
  },
  async run(flags, [sub, ...rest]) {
    const h = await harnessContext(flags).harness();
    const print = (json: unknown, text: string) => out(flags.json ? JSON.stringify(json, null, 2) : text);
    switch (sub) {
      case 'new': {
        const layer = need(flags, 'layer', LAYERS.join(', '));
        const r = await newVersion(h, {
          parent: need(flags, 'parent', 'the version to branch from, e.g. v0'),
          hypothesis: need(flags, 'hypothesis', '"If we change X, Y improves because Z"'),
          targetMetric: need(flags, 'target-metric', 'the metric Y'),
          success: need(flags, 'success', 'a falsifiable criterion such as "dead_group_ratio < 0.30"'),
          layer: layer as Layer,
          because: flagString(flags, 'because'),
          factor: flagString(flags, 'factor'),
          slug: flagString(flags, 'slug'),
          worktree: Boolean(flags.worktree),
        });
        const where = r.worktree ?? `git switch '${r.entry.branch}'`;
        print({ ...r.entry, worktree: r.worktree }, [`${r.entry.id} proposed on ${r.entry.branch} (from ${r.entry.parent} ${r.entry.base.slice(0, 12)})`, r.worktree ? `worktree: ${r.worktree}` : '', `Next: make the single-factor change in ${where}, then \`evotrainer version commit ${r.entry.id}\``].filter(Boolean).join('\n'));
        return 0;
      }
      case 'commit': {
        const id = versionArg(rest[0], 'commit');
        const r = await commitVersion(h, id, { message: flagString(flags, 'message'), overrideSingleFactor: flagString(flags, 'override-single-factor'), factor: flagString(flags, 'factor') });
        print(r.entry, [
          `${id}: intervention ${r.entry.commit.slice(0, 12)} on ${r.entry.branch}`,
          `  changed: ${r.factor.units.join(', ')}`,
          r.factor.ok ? `  single factor: ${r.factor.factor ?? '-'}` : `  single-factor override recorded: ${r.entry.intervention?.singleFactorOverride?.reason}`,
          `Next: \`evotrainer backtest ${id} --trust\` (it records the report and advances ${id} to backtested)`,
        ].join('\n'));
        return 0;
      }
      case 'advance': {
        const id = versionArg(rest[0], 'advance');
        const to = rest[1] as VersionStatus | undefined;
        if (!to) throw new UsageError('version advance needs the new state: backtested, training or evaluated');
        const metrics = flagString(flags, 'metrics');
        const e = await advanceVersion(h, id, to, { backtest: flagString(flags, 'backtest'), health: flagString(flags, 'health'), summary: flagString(flags, 'summary'), job: flagString(flags, 'job'), metrics: metrics ? parseMetrics(metrics) : undefined });
        const next = to === 'evaluated' ? `\`evotrainer promote ${id}\` or \`evotrainer reject ${id} --reason …\`` : `\`evotrainer version advance ${id} ${to === 'backtested' ? 'training --job ID' : 'evaluated --metrics …'}\``;
        print(e, `${id}: ${e.transitions[e.transitions.length - 2]?.to ?? ''} → ${e.status}\nNext: ${next}`);
        return 0;
      }
      case 'evidence': {
        const id = versionArg(rest[0], 'evidence');
        const metrics = flagString(flags, 'metrics');
        const e = await attachEvidence(h, id, { backtest: flagString(flags, 'backtest'), health: flagString(flags, 'health'), summary: flagString(flags, 'summary'), metrics: metrics ? parseMetrics(metrics) : undefined });
        print(e, `${id}: evidence attached (${e.status})`);
        return 0;
      }
      case 'show': {
        const id = versionArg(rest[0], 'show');
        const e = requireEntry(await readLedger(h), id);
        const lines = [
          `${e.id}  ${e.status}  ${e.branch}  commit ${e.commit.slice(0, 12)}  parent ${e.parent ?? '—'}`,
          e.hypothesis ? `hypothesis: ${e.hypothesis.change}\ntarget: ${e.hypothesis.targetMetric}  success: ${e.hypothesis.successCriterion}` : '',
          e.intervention ? `intervention (${e.intervention.layer}, factor ${e.intervention.factor || '—'}): ${e.intervention.changedPaths.join(', ')}${e.intervention.singleFactorOverride ? `\n  single-factor override: ${e.intervention.singleFactorOverride.reason}` : ''}` : '',
          Object.keys(e.metrics).length ? `metrics: ${Object.entries(e.metrics).map(([k, v]) => `${k}=${v}`).join(', ')}` : '',
          'transitions:',
          ...e.transitions.map((t) => `  ${t.at}  ${t.from ?? '∅'} → ${t.to}  by ${t.by}${t.evidence.map((x) => `\n    ${x.kind}: ${x.summary}`).join('')}`),
          e.decision ? `decision: ${e.decision.decision} by ${e.decision.decidedBy}\n${e.decision.reasons.map((r) => `  [${r.passed ? 'ok' : 'FAIL'}] ${r.check}: ${r.detail}`).join('\n')}` : '',
        ];
        print(e, lines.filter(Boolean).join('\n'));
        return 0;
      }
      case 'worktree': {
        const id = versionArg(rest[0], 'worktree');
        const dir = await addWorktree(h, requireEntry(await readLedger(h), id));
        print({ version: id, worktree: dir }, dir);
        return 0;
      }
      default:
        throw new UsageError(sub ? `unknown subcommand "${sub}"; use new, commit, advance, evidence, show or worktree` : 'use `version new|commit|advance|evidence|show|worktree`');
    }
  },
};
