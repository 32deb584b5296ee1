import { describeFlags, parseArgs, UsageError } from './args';
import { guardTerminalOutput, type Command } from './command';
import { backtest, gate } from './commands/backtest';
import { curves } from './commands/curves';
import { diagnose, health, metric } from './commands/diagnose';
import { evolveCommand } from './commands/evolve';
import { doctor } from './commands/doctor';
import { judge } from './commands/judge';
import { labels } from './commands/labels';
import { harnessCommands } from './commands/harness';
import { importCommand } from './commands/import';
import { job } from './commands/job';
import { rollouts } from './commands/rollouts';
import { view } from './commands/view';

declare const EVOTRAINER_VERSION: string;

export const commands: Record<string, Command> = {
  doctor,
  import: importCommand,
  rollouts,
  health,
  curves,
  diagnose,
  metric,
  judge,
  labels,
  backtest,
  gate,
  evolve: evolveCommand,
  view,
  job,
  ...harnessCommands,
};

function usage(): string {
  const rows = Object.entries(commands).map(([n, c]) => `  ${n.padEnd(12)}${c.summary}`);
  return ['Usage: evotrainer <command> [options]', '', 'Commands:', ...rows, '', 'Run `evotrainer <command> --help` for its options.'].join('\n');
}

/**
 * A reader that stops early (`evotrainer rollouts show 42 | head`) closes the pipe: the
 * output is done, not failed, so the process ends quietly instead of with an EPIPE stack.
 */
function endQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (stream.listenerCount('error')) continue;
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw err;
    });
  }
}

export async function main(argv: string[]): Promise<number> {
  guardTerminalOutput();
  endQuietlyOnClosedPipe();
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
    process.stdout.write(`Usage: ${cmd.usage ?? `evotrainer ${name} [options]`}\n\n${cmd.summary}\n\nOptions:\n${describeFlags(cmd.flags)}\n`);
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
    // Expected failures (bad input, a locked store) read as one line; a stack only when asked.
    process.stderr.write(`evotrainer ${name}: ${process.env.EVOTRAINER_DEBUG && err instanceof Error ? err.stack : err instanceof Error ? err.message : String(err)}\n`);
    return 1;
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
