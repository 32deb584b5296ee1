import type { Scope } from '../core/diagnose/health';
import { UsageError } from './args';
import { flagString } from './command';

/** The rollouts a command looks at: run, version, split, step range. */
export const SCOPE_FLAGS = {
  run: { type: 'string', description: 'only this run' },
  version: { type: 'string', description: 'only this version' },
  split: { type: 'string', description: 'train or val' },
  steps: { type: 'string', description: 'step range A:B (inclusive)' },
} as const;

export function scopeFromFlags(flags: Record<string, string | boolean>): Scope {
  const scope: Scope = {};
  const run = flagString(flags, 'run');
  const version = flagString(flags, 'version');
  const split = flagString(flags, 'split');
  const steps = flagString(flags, 'steps');
  if (run) scope.run = run;
  if (version) scope.version = version;
  if (split) {
    if (split !== 'train' && split !== 'val') throw new UsageError('--split must be train or val');
    scope.split = split;
  }
  if (steps) {
    const m = /^(\d+):(\d+)$/.exec(steps);
    if (!m) throw new UsageError(`--steps must be A:B, got "${steps}"`);
    scope.steps = [Number(m[1]), Number(m[2])];
  }
  return scope;
}
