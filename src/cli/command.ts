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
