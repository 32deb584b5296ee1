/** A small, strict argument parser: unknown flags are errors, never silently ignored. */
export interface FlagSpec {
  [name: string]: { type: 'boolean' | 'string'; description: string };
}

export class UsageError extends Error {}

export interface Parsed {
  flags: Record<string, string | boolean>;
  positionals: string[];
}

export function parseArgs(argv: readonly string[], spec: FlagSpec): Parsed {
  const flags: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const def = spec[name];
    if (!def) throw new UsageError(`unknown option --${name}`);
    if (def.type === 'boolean') {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`);
      flags[name] = true;
    } else {
      const value = eq !== -1 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      flags[name] = value;
    }
  }
  return { flags, positionals };
}

export function describeFlags(spec: FlagSpec): string {
  return Object.entries(spec)
    .map(([n, d]) => `${`  --${n}${d.type === 'string' ? ' VALUE' : ''}`.padEnd(23)} ${d.description}`)
    .join('\n');
}
