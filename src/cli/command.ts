import { terminalSafe } from '../core/util/text';
import { UsageError, type FlagSpec } from './args';

export interface Command {
  summary: string;
  usage?: string;
  flags: FlagSpec;
  run(flags: Record<string, string | boolean>, positionals: string[]): Promise<number>;
}

export function flagString(flags: Record<string, string | boolean>, name: string): string | undefined {
  const v = flags[name];
  return typeof v === 'string' ? v : undefined;
}

/**
 * The one choke point of CLI output: every write to stdout and stderr, by any command,
 * passes through terminalSafe, so no untrusted text reaches the terminal as escapes.
 * Installed once by main(); bytes (a job's log) are decoded as UTF-8 first.
 */
export function guardTerminalOutput(): void {
  for (const stream of [process.stdout, process.stderr] as (NodeJS.WriteStream & { evotrainerGuarded?: boolean })[]) {
    if (stream.evotrainerGuarded) continue;
    stream.evotrainerGuarded = true;
    const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) =>
      write(typeof chunk === 'string' ? terminalSafe(chunk) : chunk instanceof Uint8Array ? terminalSafe(Buffer.from(chunk).toString('utf8')) : chunk, ...rest)) as typeof stream.write;
  }
}

export function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** A flag that must be a positive number (`whole` for counts); undefined when absent. */
export function positiveFlag(flags: Record<string, string | boolean>, name: string, whole = false): number | undefined {
  const v = flagString(flags, name);
  if (v === undefined) return undefined;
  if (!(whole ? /^\d+$/ : /^\d+(\.\d+)?$/).test(v) || Number(v) <= 0) throw new UsageError(`--${name} must be a positive ${whole ? 'whole number' : 'number'}, got "${v}"`);
  return Number(v);
}

/** The one `vN` positional a version command takes. */
export function versionArg(positionals: string[], cmd: string): string {
  const [v, extra] = positionals;
  if (!v || extra || !/^v\d+$/.test(v)) throw new UsageError(`${cmd} needs one version id like v3`);
  return v;
}
