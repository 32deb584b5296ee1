import type { FlagSpec } from './args';

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
