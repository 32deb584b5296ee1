import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gitOut } from '../harness/git';
import type { Harness } from '../harness/repo';
import type { Manifest } from '../harness/manifest';
import type { FunctionSpec } from './pool';

/** A read-only snapshot of one commit's tree (git archive), removed by `dispose`. */
export interface Tree {
  commit: string;
  dir: string;
  dispose(): void;
}

export async function materialize(h: Harness, commit: string): Promise<Tree> {
  const base = mkdtempSync(path.join(tmpdir(), 'evotrainer-tree-'));
  const dir = path.join(base, commit.slice(0, 12));
  mkdirSync(dir);
  await new Promise<void>((resolve, reject) => {
    const archive = spawn('git', ['archive', '--format=tar', commit], { cwd: h.root, stdio: ['ignore', 'pipe', 'pipe'] });
    const tar = spawn('tar', ['-x', '-C', dir], { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    archive.stderr.on('data', (d: Buffer) => (err += d.toString()));
    tar.stderr.on('data', (d: Buffer) => (err += d.toString()));
    archive.stdout.pipe(tar.stdin);
    let pending = 2;
    const done = (code: number | null) => {
      if (code !== 0) reject(new Error(`could not extract ${commit.slice(0, 12)} (git archive | tar): ${err.trim()}`));
      else if (--pending === 0) resolve();
    };
    archive.on('exit', done);
    tar.on('exit', done);
  });
  return { commit, dir, dispose: () => rmSync(base, { recursive: true, force: true }) };
}

export async function changedPaths(h: Harness, from: string, to: string): Promise<string[]> {
  if (from === to) return [];
  return (await gitOut(h.root, ['diff', '--name-only', '-z', from, to])).split('\0').filter(Boolean);
}

/** The reward function a version's training runs, as the worker loads it. */
export function rewardSpec(m: Manifest, dir: string, name: string): FunctionSpec | null {
  const signature = m.reward?.signature ?? 'verl';
  const p = m.reward?.path ?? 'reward/compute_score.py';
  if (!existsSync(path.join(dir, p))) return null;
  return { name, path: p, function: m.reward?.function ?? (signature === 'trl' ? 'reward_func' : 'compute_score'), kind: signature };
}

/** Group and trajectory filters of a version (declared, or the conventional file when present). */
export function filterSpecs(m: Manifest, dir: string, prefix: string): { group: FunctionSpec | null; trajectory: FunctionSpec | null } {
  const conventional = 'filters/group_filter.py';
  const pick = (kind: 'group' | 'trajectory', fallbackFn: string): FunctionSpec | null => {
    const declared = m.filters?.[kind];
    const p = declared?.path ?? conventional;
    if (!existsSync(path.join(dir, p))) return null;
    const fn = declared?.function ?? fallbackFn;
    if (!declared) {
      // Only when the conventional module defines it.
      const src = readFileSync(path.join(dir, p), 'utf8');
      if (!new RegExp(`^def ${fn}\\s*\\(`, 'm').test(src)) return null;
    }
    return { name: `${prefix}_${kind}`, path: p, function: fn, kind };
  };
  return { group: pick('group', 'keep_group'), trajectory: pick('trajectory', 'keep_trajectory') };
}

/** Where a changed path sits in the harness: what a backtest can replay offline. */
export function classifyPath(p: string, m: Manifest): 'reward' | 'filter' | 'diagnostics' | 'manifest' | 'other' {
  const reward = m.reward?.path ?? 'reward/compute_score.py';
  if (p === reward || p.startsWith('reward/')) return 'reward';
  const filterPaths = [m.filters?.group?.path, m.filters?.trajectory?.path].filter(Boolean);
  if (filterPaths.includes(p) || p.startsWith('filters/')) return 'filter';
  if (p.startsWith('diagnostics/')) return 'diagnostics';
  if (p === 'evotrainer.yaml') return 'manifest';
  return 'other';
}
