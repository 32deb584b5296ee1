import type { ChangeSet } from './changes';
import { MANIFEST_FILE, pathMatches, type Manifest } from './manifest';

/**
 * The action boundary (METHOD.md, "Promotion — and preventing false prosperity"): a
 * trainer may change reward logic, filters, env config and version configs, never the
 * framework core, the hardware setup or the evaluation data. Judged with the PARENT's
 * manifest, so a version cannot relax the rules it is judged by.
 */
export interface BoundaryViolation {
  path: string;
  rule: string;
  detail: string;
}

/** Manifest keys no version may change: the eval pin, the boundary itself, the hardware. */
export const FROZEN_MANIFEST_KEYS = ['eval_set', 'action_boundary', 'cluster', 'clusters'] as const;

export function checkBoundary(parent: Manifest, changes: ChangeSet): BoundaryViolation[] {
  const out: BoundaryViolation[] = [];
  const frozen = parent.action_boundary?.frozen ?? [];
  const editable = parent.action_boundary?.editable ?? [];
  const evalPath = parent.eval_set?.path;
  for (const f of changes.files) {
    const entry = frozen.find((e) => pathMatches(e, f.path));
    if (entry !== undefined) {
      out.push({ path: f.path, rule: `action_boundary.frozen: "${entry}"`, detail: `${f.path} is frozen by the action boundary in ${MANIFEST_FILE}; revert it (\`git checkout <parent> -- ${f.path}\`)` });
    } else if (evalPath && pathMatches(evalPath, f.path)) {
      out.push({ path: f.path, rule: 'eval_set.path', detail: `${f.path} is the pinned eval set; it must be identical across versions` });
    } else if (editable.length && f.path !== MANIFEST_FILE && !editable.some((e) => pathMatches(e, f.path))) {
      out.push({ path: f.path, rule: `action_boundary.editable: [${editable.join(', ')}]`, detail: `${f.path} is outside the editable paths; move the change under one of them or leave it out` });
    }
  }
  for (const k of changes.keys) {
    if (k.file !== MANIFEST_FILE) continue;
    const top = k.key.split('.')[0]!;
    if ((FROZEN_MANIFEST_KEYS as readonly string[]).includes(top)) {
      out.push({ path: `${MANIFEST_FILE}:${k.key}`, rule: `${MANIFEST_FILE}: ${top} is frozen`, detail: `a version may not change ${top} (the eval pin, the action boundary and the cluster profile judge every version alike)` });
    }
  }
  if (changes.files.some((f) => f.path === MANIFEST_FILE) && !changes.manifest) {
    out.push({ path: MANIFEST_FILE, rule: 'manifest schema', detail: `${MANIFEST_FILE} is invalid after the change; run \`evotrainer schema --check\` in the worktree` });
  }
  const pin = parent.eval_set?.hash;
  if (pin && evalPath && changes.evalHash !== pin && !out.some((v) => v.rule === 'eval_set.path' || pathMatches(evalPath, v.path))) {
    out.push({ path: evalPath, rule: 'eval_set.hash', detail: `the eval set hashes to ${changes.evalHash ?? '(missing)'}, not the pinned ${pin}` });
  }
  return out;
}

/**
 * Single factor: every changed unit (a file; for YAML/JSON config files, each changed
 * leaf key) must fall inside one declared factor, `path` or `path:key.prefix`. With no
 * declared factor, more than one unit is more than one factor.
 */
export interface FactorCheck {
  ok: boolean;
  factor: string | null;
  units: string[];
  outside: string[];
}

export function factorUnits(changes: ChangeSet): string[] {
  const units: string[] = [];
  const keyed = new Set(changes.keys.map((k) => k.file));
  for (const f of changes.files) {
    if (keyed.has(f.path) && f.status === 'M') units.push(...changes.keys.filter((k) => k.file === f.path).map((k) => `${f.path}:${k.key}`));
    else units.push(f.path);
  }
  return units;
}

function inside(factor: string, unit: string): boolean {
  const [fPath = '', fKey] = splitUnit(factor);
  const [uPath = '', uKey] = splitUnit(unit);
  if (!pathMatches(fPath, uPath)) return false;
  if (fKey === undefined) return true;
  return uKey !== undefined && (uKey === fKey || uKey.startsWith(`${fKey}.`));
}

function splitUnit(u: string): [string, string | undefined] {
  const i = u.indexOf(':');
  return i === -1 ? [u, undefined] : [u.slice(0, i), u.slice(i + 1)];
}

export function checkSingleFactor(changes: ChangeSet, declared: string | null): FactorCheck {
  const units = factorUnits(changes);
  if (declared) {
    const outside = units.filter((u) => !inside(declared, u));
    return { ok: outside.length === 0, factor: declared, units, outside };
  }
  return { ok: units.length <= 1, factor: units[0] ?? null, units, outside: units.length > 1 ? units.slice(1) : [] };
}
