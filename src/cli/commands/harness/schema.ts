import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { checkManifest, manifestJsonSchema } from '../../../core/harness/manifest';
import { UsageError } from '../../args';
import { flagString, out, type Command } from '../../command';

export const schema: Command = {
  summary: 'print the JSON Schema of evotrainer.yaml, or check a manifest (file:line:col)',
  usage: 'evotrainer schema [--out FILE] | evotrainer schema --check [FILE]',
  flags: {
    out: { type: 'string', description: 'write the JSON Schema to FILE instead of stdout' },
    check: { type: 'boolean', description: 'validate a manifest (default ./evotrainer.yaml)' },
  },
  async run(flags, positionals) {
    if (flags.check) {
      const file = positionals[0] ?? 'evotrainer.yaml';
      if (!existsSync(file)) throw new UsageError(`${file} does not exist`);
      const { manifest, problems } = checkManifest(readFileSync(file, 'utf8'));
      for (const p of problems) process.stderr.write(`${file}:${p.line}:${p.column}: ${p.severity}: ${p.message}\n`);
      if (manifest) out(`${file}: valid${problems.length ? ` (${problems.length} warning(s))` : ''}`);
      return manifest ? 0 : 1;
    }
    const text = JSON.stringify(manifestJsonSchema(), null, 2) + '\n';
    const file = flagString(flags, 'out');
    if (file) writeFileSync(file, text);
    else process.stdout.write(text);
    return 0;
  },
};
