import { existsSync } from 'node:fs';
import { FAILURE_MODES } from '../../core/diagnose/failureModes';
import { readLedger } from '../../core/harness/ledger';
import { versionMarks } from '../../viewer/curves/backend';
import { startExplorerServer } from '../../viewer/explorer/server';
import { UsageError } from '../args';
import { flagString, out, type Command } from '../command';
import { harnessContext } from '../context';
import { STORE_FLAG } from '../store';

export const view: Command = {
  summary: 'serve the failure explorer and the training curves in a browser (127.0.0.1, tokened URL)',
  usage: 'evotrainer view [--curves [--metric NAME]] [--port N] [--failure-mode MODE] [--run RUN] [--version V] [--step N] [--rollout ID]',
  flags: {
    curves: { type: 'boolean', description: 'print the training curves page first (both pages are served; each links to the other)' },
    metric: { type: 'string', description: 'with --curves: open the chart on this metric (entropy, score, a logged name)' },
    port: { type: 'string', description: 'port on 127.0.0.1 (default: a free one)' },
    'failure-mode': { type: 'string', description: `open filtered to one failure mode (${FAILURE_MODES.join(', ')})` },
    run: { type: 'string', description: 'open filtered to one run' },
    version: { type: 'string', description: 'open filtered to one version' },
    step: { type: 'string', description: 'open filtered to the rollouts of one training step' },
    rollout: { type: 'string', description: 'open this rollout\'s trajectory' },
    ...STORE_FLAG,
  },
  async run(flags) {
    const portFlag = flagString(flags, 'port');
    if (portFlag !== undefined && !/^\d{1,5}$/.test(portFlag)) throw new UsageError(`--port must be a port number, got "${portFlag}"`);
    const mode = flagString(flags, 'failure-mode');
    if (mode !== undefined && !(FAILURE_MODES as readonly string[]).includes(mode)) throw new UsageError(`--failure-mode must be one of ${FAILURE_MODES.join(', ')}; got "${mode}"`);
    const rollout = flagString(flags, 'rollout');
    if (rollout !== undefined && !/^\d+$/.test(rollout)) throw new UsageError(`--rollout must be a rollout id, got "${rollout}"`);
    const step = flagString(flags, 'step');
    if (step !== undefined && !/^-?\d{1,9}$/.test(step)) throw new UsageError(`--step must be a step number, got "${step}"`);
    const curves = flags.curves === true;
    const metric = flagString(flags, 'metric');
    if (metric !== undefined && !curves) throw new UsageError('--metric picks the curves page\'s metric: pass it with --curves');
    if (metric !== undefined && !/^\S{1,500}$/.test(metric)) throw new UsageError(`--metric must be a metric name, got "${metric}"`);
    const ctx = harnessContext(flags);
    const file = ctx.storePath;
    if (!existsSync(file)) throw new Error(`${file}: no rollout store here; import rollouts first (\`evotrainer import PATH\`) or pass --store FILE`);
    // The curves mark each version with its standing in the harness's ledger; a store outside a harness marks none.
    const versions = async () => {
      if (!ctx.root) return [];
      try {
        return versionMarks(await readLedger(await ctx.harness()));
      } catch (err) {
        process.stderr.write(`evotrainer: the curves mark no versions (${err instanceof Error ? err.message.split('\n')[0] : String(err)})\n`);
        return [];
      }
    };
    const server = await startExplorerServer({ storeFile: file, port: portFlag ? Number(portFlag) : 0, log: (m) => process.stderr.write(`${m}\n`), versions });
    // Indexed before the URL is printed, so the first page load is fast.
    const first = await server.backend.state();
    if (first.status === 'failed') {
      await server.close();
      await server.backend.dispose();
      throw new Error(first.error ?? 'the store could not be read');
    }
    const query = new URLSearchParams();
    if (mode) query.set('failureMode', mode);
    for (const k of ['run', 'version', 'step'] as const) {
      const v = flagString(flags, k);
      if (v) query.set(k, v);
    }
    if (rollout) query.set('rollout', rollout);
    const q = query.toString();
    const explorerUrl = `${server.url}${q ? `?${q}` : ''}`;
    const curvesUrl = `${server.url}curves/${metric ? `?${new URLSearchParams({ metric }).toString()}` : ''}`;
    out(
      curves
        ? `Training curves for ${file}:\n  ${curvesUrl}\nFailure explorer: ${explorerUrl}\n`
        : `Failure explorer for ${file}:\n  ${explorerUrl}\nTraining curves: ${curvesUrl}\n`,
    );
    out(`Serving on 127.0.0.1 only; the URL's token is the key. Ctrl-C stops it.`);
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await server.close();
    await server.backend.dispose();
    return 0;
  },
};
