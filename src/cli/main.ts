import { formatDoctorReport, runDoctor } from '../core/doctor';
import { describeFlags, parseArgs, UsageError, type FlagSpec } from './args';

declare const EVOTRAINER_VERSION: string;

interface Command {
  summary: string;
  flags: FlagSpec;
  run(flags: Record<string, string | boolean>, positionals: string[]): Promise<number>;
}

const commands: Record<string, Command> = {
  doctor: {
    summary: 'check git, python3, ssh, sbatch and the embedded store; say what to install',
    flags: {
      json: { type: 'boolean', description: 'print a machine-readable report' },
      python: { type: 'string', description: 'interpreter for harness code (default python3)' },
    },
    async run(flags) {
      const report = await runDoctor({ python: typeof flags.python === 'string' ? flags.python : undefined });
      process.stdout.write(flags.json ? JSON.stringify(report, null, 2) + '\n' : formatDoctorReport(report) + '\n');
      return report.ok ? 0 : 1;
    },
  },
};

function usage(): string {
  const rows = Object.entries(commands).map(([n, c]) => `  ${n.padEnd(12)}${c.summary}`);
  return ['Usage: evotrainer <command> [options]', '', 'Commands:', ...rows, '', 'Run `evotrainer <command> --help` for its options.'].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage() + '\n');
    return 0;
  }
  if (name === '--version' || name === '-V') {
    process.stdout.write(`${typeof EVOTRAINER_VERSION === 'string' ? EVOTRAINER_VERSION : 'dev'}\n`);
    return 0;
  }
  const cmd = commands[name];
  if (!cmd) {
    process.stderr.write(`evotrainer: unknown command "${name}"\n\n${usage()}\n`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`Usage: evotrainer ${name} [options]\n\n${cmd.summary}\n\nOptions:\n${describeFlags(cmd.flags)}\n`);
    return 0;
  }
  try {
    const { flags, positionals } = parseArgs(rest, cmd.flags);
    return await cmd.run(flags, positionals);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`evotrainer ${name}: ${err.message}\nRun \`evotrainer ${name} --help\` for its options.\n`);
      return 2;
    }
    throw err;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`evotrainer: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
