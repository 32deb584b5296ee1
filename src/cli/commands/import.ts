import { existsSync, readFileSync } from 'node:fs';
import { TASK_DOMAINS, type TaskDomain } from '../../core/model';
import { FORMATS, type FieldMapping, type FormatName } from '../../core/store/importers';
import { where, type CurveImportSummary } from '../../core/store/curves/import';
import { ImportError } from '../../core/store/rows';
import { DEFAULT_MAX_DOCUMENT_BYTES, formatBytes, MAX_DOCUMENT_ENV, parseSize } from '../../core/store/importers/documentSize';
import type { OnError } from '../../core/store/store';
import { UsageError } from '../args';
import { flagString, out, type Command } from '../command';
import { harnessContext } from '../context';
import { STORE_FLAG } from '../store';


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

/** What the training-curve import did, with each skipped record's place (file:line, or file@byte offset). */
function curvesText(c: CurveImportSummary): string {
  const imported = c.files.filter((f) => f.status === 'imported');
  const lines = [`Imported ${c.points} training-curve values from ${imported.length} file(s) (${[...new Set(imported.map((f) => f.format))].join(', ') || 'none new'}).`];
  if (imported.some((f) => f.resumed)) lines.push(`${imported.filter((f) => f.resumed).length} log(s) still being written continued from where the last import stopped.`);
  if (c.badRecords) {
    lines.push(`${c.badRecords} malformed record(s) skipped (the rest of each file was read):`);
    for (const p of c.problems.slice(0, 10)) lines.push(`  ${where(p)}: ${p.reason}`);
    if (c.badRecords > 10) lines.push(`  … and ${c.badRecords - 10} more (--json lists the first ${c.problems.length})`);
  }
  return lines.join('\n');
}

export const importCommand: Command = {
  summary: "import rollout dumps (verl, TRL, SkyRL, rLLM, prime-rl, verifiers, mini-swe-agent, SWE-agent, JSONL) and training curves (verl's console log and file logger, TensorBoard event files, MLflow's mlruns/) into the store",
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
    domain: { type: 'string', description: `task domain of the runs: ${TASK_DOMAINS.join(', ')} (default: the format's, else the harness manifest's)` },
    'max-document-size': { type: 'string', description: `a file read whole (trajectory, JSON document) over this size is refused before it is read, e.g. 512M or 2G (default ${formatBytes(DEFAULT_MAX_DOCUMENT_BYTES)}, or ${MAX_DOCUMENT_ENV})` },
    verdicts: { type: 'string', description: 'SWE-bench run summary (resolved_ids, unresolved_ids, error_ids…) or report.json with the verdicts of SWE trajectories' },
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
    const domain = flagString(flags, 'domain');
    if (domain !== undefined && !(TASK_DOMAINS as readonly string[]).includes(domain)) throw new UsageError(`--domain must be one of ${TASK_DOMAINS.join(', ')}`);
    const verdicts = flagString(flags, 'verdicts');
    if (verdicts && !existsSync(verdicts)) throw new UsageError(`--verdicts: ${verdicts}: no such file (give the SWE-bench run summary, e.g. <model>.<run_id>.json, or a report.json)`);
    const maxSize = flagString(flags, 'max-document-size');
    let maxDocumentBytes: number | undefined;
    try {
      maxDocumentBytes = maxSize === undefined ? undefined : parseSize(maxSize, '--max-document-size');
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
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
      const ctx = harnessContext(flags);
      const summary = await ctx.withStore((store) =>
        store.import(paths, {
          run: flagString(flags, 'run'),
          version: flagString(flags, 'version') ?? null,
          split: split as 'train' | 'val' | undefined,
          format: format as FormatName | undefined,
          onError: onError as OnError,
          mapping,
          verdicts,
          domain: domain as TaskDomain | undefined,
          fallbackDomain: ctx.domain(),
          maxDocumentBytes,
          signal: abort.signal,
          onProgress: flags.json || !process.stderr.isTTY ? undefined : ({ file, rollouts }) => process.stderr.write(`  ${rollouts} rollouts from ${file}\r`),
        }),
      );
      if (flags.json) {
        out(JSON.stringify({ store: ctx.storePath, ...summary }, null, 2));
      } else {
        const imported = summary.files.filter((f) => f.status === 'imported');
        const unchanged = summary.files.length - imported.length;
        out(summary.files.length || !summary.curves ? `\nImported ${summary.rollouts} rollouts (${summary.steps} steps) from ${imported.length} file(s) into ${ctx.storePath}` : `\nInto ${ctx.storePath}:`);
        if (unchanged) out(`${unchanged} file(s) unchanged since their last import.`);
        if (imported.some((f) => f.resumed)) out(`${imported.filter((f) => f.resumed).length} live file(s) continued from where the last import stopped.`);
        for (const n of summary.notes ?? []) out(n);
        if (summary.badRecords) out(`${summary.badRecords} malformed record(s) ${onError === 'quarantine' ? 'kept in the quarantine table' : 'skipped'}.`);
        for (const f of summary.files) if (f.setAside) out(`  ${f.file}: set aside: ${f.setAside}`);
        if (summary.ignored.length) {
          out(`${summary.ignored.length} file(s) not imported:`);
          for (const f of summary.ignored) out(`  ${f.file}: ${f.reason}`);
        }
        if (summary.curves) out(curvesText(summary.curves));
      }
      return 0;
    } catch (err) {
      if (err instanceof ImportError) {
        process.stderr.write(`\nevotrainer import: ${err.message}\n`);
        // A record's error can be set aside with --on-error; a file's (an unreadable gzip, a document too large) says itself what to do.
        const hint = err.line === null ? 'Nothing was imported: the store is as it was before this import.\n' : 'Nothing was imported. Fix the record, or rerun with --on-error skip|quarantine to set bad records aside.\n';
        process.stderr.write(abort.signal.aborted ? 'Interrupted: the store is as it was before this import.\n' : hint);
        return abort.signal.aborted ? exitCode : 1;
      }
      throw err;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};
