import { readFileSync } from 'node:fs';
import { FORMATS, type FieldMapping, type FormatName } from '../../core/store/importers';
import { ImportError } from '../../core/store/rows';
import type { OnError } from '../../core/store/store';
import { UsageError } from '../args';
import { flagString, out, type Command } from '../command';
import { STORE_FLAG, storePath, withStore } from '../store';

const MAPPING_KEYS = ['prompt', 'response', 'groundTruth', 'reward', 'correct', 'promptId', 'groupId', 'step', 'split', 'dataSource'] as const;

/** `--map prompt=question,response=solution` and/or `--mapping FILE|JSON`, plus `--samples a,b`. */
function parseMapping(flags: Record<string, string | boolean>): FieldMapping | undefined {
  const m: Record<string, unknown> = {};
  const file = flagString(flags, 'mapping');
  if (file) {
    const text = file.trim().startsWith('{') ? file : readFileSync(file, 'utf8');
    try {
      Object.assign(m, JSON.parse(text));
    } catch (err) {
      throw new UsageError(`--mapping: not valid JSON (${(err as Error).message})`);
    }
  }
  for (const pair of (flagString(flags, 'map') ?? '').split(',').filter(Boolean)) {
    const [k, v] = pair.split('=');
    if (!k || !v || !(MAPPING_KEYS as readonly string[]).includes(k)) throw new UsageError(`--map: "${pair}" should be KEY=FIELD with KEY one of ${MAPPING_KEYS.join(', ')}`);
    m[k] = v;
  }
  const samples = flagString(flags, 'samples');
  if (samples) m.samples = samples.split(',').filter(Boolean);
  if (!Object.keys(m).length) return undefined;
  if (typeof m.prompt !== 'string') throw new UsageError('a field mapping needs at least prompt=FIELD');
  return m as unknown as FieldMapping;
}

export const importCommand: Command = {
  summary: 'import rollout dumps (verl, TRL, SkyRL, rLLM, prime-rl, mini-swe-agent, SWE-agent, JSONL) into the store',
  usage: 'evotrainer import PATH... [options]',
  flags: {
    run: { type: 'string', description: 'run the rollouts belong to (default: the name of the path)' },
    version: { type: 'string', description: 'harness version that produced them (e.g. v3)' },
    split: { type: 'string', description: 'train or val, where the path does not say' },
    format: { type: 'string', description: `one of ${FORMATS.join(', ')} (default: detected)` },
    'on-error': { type: 'string', description: 'fail (default), skip, or quarantine malformed records' },
    map: { type: 'string', description: 'field mapping for --format jsonl, e.g. prompt=question,response=answer' },
    mapping: { type: 'string', description: 'field mapping as a JSON file or inline JSON' },
    samples: { type: 'string', description: 'for --format jsonl: fields each holding one sample of the prompt' },
    json: { type: 'boolean', description: 'print the summary as JSON' },
    ...STORE_FLAG,
  },
  async run(flags, paths) {
    if (!paths.length) throw new UsageError('give at least one file or directory to import');
    const format = flagString(flags, 'format');
    if (format && !(FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}`);
    const onError = flagString(flags, 'on-error') ?? 'fail';
    if (!['fail', 'skip', 'quarantine'].includes(onError)) throw new UsageError('--on-error must be fail, skip or quarantine');
    const split = flagString(flags, 'split');
    if (split && split !== 'train' && split !== 'val') throw new UsageError('--split must be train or val');
    const mapping = parseMapping(flags);
    if (format === 'jsonl' && !mapping) throw new UsageError('--format jsonl needs a field mapping: --map prompt=FIELD[,response=FIELD,…] or --mapping FILE');

    // The first Ctrl-C / SIGTERM stops the import at once (DuckDB's query is interrupted, a
    // file being read stops at its next chunk) and the store stays as it was; the handlers
    // are `once`, so a second signal ends the process the default way.
    const abort = new AbortController();
    let exitCode = 130;
    const onSignal = (signal: NodeJS.Signals) => {
      exitCode = signal === 'SIGTERM' ? 143 : 130;
      abort.abort();
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      const summary = await withStore(flags, (store) =>
        store.import(paths, {
          run: flagString(flags, 'run'),
          version: flagString(flags, 'version') ?? null,
          split: split as 'train' | 'val' | undefined,
          format: format as FormatName | undefined,
          onError: onError as OnError,
          mapping,
          signal: abort.signal,
          onProgress: flags.json || !process.stderr.isTTY ? undefined : ({ file, rollouts }) => process.stderr.write(`  ${rollouts} rollouts from ${file}\r`),
        }),
      );
      if (flags.json) {
        out(JSON.stringify({ store: storePath(flags), ...summary }, null, 2));
      } else {
        const imported = summary.files.filter((f) => f.status === 'imported');
        const unchanged = summary.files.length - imported.length;
        out(`\nImported ${summary.rollouts} rollouts (${summary.steps} steps) from ${imported.length} file(s) into ${storePath(flags)}`);
        if (unchanged) out(`${unchanged} file(s) unchanged since their last import.`);
        if (imported.some((f) => f.resumed)) out(`${imported.filter((f) => f.resumed).length} live file(s) continued from where the last import stopped.`);
        if (summary.badRecords) out(`${summary.badRecords} malformed record(s) ${onError === 'quarantine' ? 'kept in the quarantine table' : 'skipped'}.`);
        if (summary.ignored.length) out(`${summary.ignored.length} file(s) not in a known dump format were ignored.`);
        for (const s of summary.skipped) out(`skipped ${s}`);
      }
      return 0;
    } catch (err) {
      if (err instanceof ImportError) {
        process.stderr.write(`\nevotrainer import: ${err.message}\n`);
        process.stderr.write(abort.signal.aborted ? 'Interrupted: the store is as it was before this import.\n' : 'Nothing was imported. Fix the record, or rerun with --on-error skip|quarantine to set bad records aside.\n');
        return abort.signal.aborted ? exitCode : 1;
      }
      throw err;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};
