import { checkBoundary } from '../../harness/boundary';
import { analyzeChanges } from '../../harness/changes';
import { gitOut } from '../../harness/git';
import { manifestAt } from '../../harness/repo';
import type { GateCheck } from '../types';
import type { NamedCheck } from './check';

/** The action boundary of the parent, from git: frozen paths untouched and the eval-set pin unchanged. */
export const actionBoundary: NamedCheck = {
  name: 'action boundary',
  async run({ h, entry, parent }) {
    if (!parent) return [];
    const parentManifest = await manifestAt(h, parent.commit);
    const changes = await analyzeChanges(h, entry.base, entry.commit, parentManifest.eval_set?.path ?? null);
    const violations = checkBoundary(parentManifest, changes);
    const frozen = violations.filter((v) => v.rule.startsWith('action_boundary.frozen') || v.rule.includes('is frozen'));
    const evalPin = violations.filter((v) => v.rule.startsWith('eval_set'));
    return [
      { check: 'frozen paths untouched', category: 'validity', passed: frozen.length === 0, detail: frozen.length ? frozen.map((v) => `${v.path} (${v.rule})`).join('; ') : `${changes.files.length} changed file(s), none frozen` },
      { check: 'eval-set pin unchanged', category: 'validity', passed: evalPin.length === 0, detail: evalPin.length ? evalPin.map((v) => v.detail).join('; ') : parentManifest.eval_set ? `${parentManifest.eval_set.path} ${parentManifest.eval_set.hash ?? '(no pin)'}` : 'no eval set declared' },
    ];
  },
};

const DEFAULT_BUG_PATTERNS = [
  {
    pattern: String.raw`\b(advantages?|adv)\b\s*(\[[^\]]*\])?\s*([-+*/]=|=\s*\1\s*[-+*/])`,
    message: 'a penalty or bonus written into the advantages (it bypasses the reward and its diagnostics: METHOD.md rejects it as a bug)',
    paths: undefined as string[] | undefined,
  },
];

/** Declared bug classes (built in, and the manifest's `gate.bug_patterns`) over the added lines of the diff. */
export const bugClasses: NamedCheck = {
  name: 'declared bug classes',
  async run({ h, entry, parent, gate }) {
    if (!parent) return [];
    const diff = await gitOut(h.root, ['diff', '--unified=0', '--no-color', entry.base, entry.commit]);
    const patterns = [...DEFAULT_BUG_PATTERNS, ...(gate.bug_patterns ?? [])];
    const hits: string[] = [];
    let file = '';
    for (const line of diff.split('\n')) {
      if (line.startsWith('+++ ')) file = line.slice(6);
      else if (line.startsWith('+') && !line.startsWith('+++')) {
        for (const p of patterns) {
          if (p.paths && !p.paths.some((x) => file === x || (x.endsWith('/') && file.startsWith(x)))) continue;
          let re: RegExp;
          try {
            re = new RegExp(p.pattern);
          } catch {
            continue;
          }
          if (re.test(line.slice(1))) hits.push(`${file}: "${line.slice(1).trim().slice(0, 100)}" — ${p.message}`);
        }
      }
    }
    const check: GateCheck = { check: 'declared bug classes', category: 'validity', passed: hits.length === 0, detail: hits.length ? hits.slice(0, 5).join('; ') : `${patterns.length} pattern(s), no match in the diff` };
    return [check];
  },
};
