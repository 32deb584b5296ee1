import path from 'node:path';

/** The benchmarks' shared setup: the project root, argv, `--name value` options. */
export const root = path.resolve(__dirname, '..', '..');
export const args = process.argv.slice(2);
export function arg(name: string, def: string): string {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? def : (args[i + 1] ?? def);
}
