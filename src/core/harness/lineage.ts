import fs from 'node:fs';
import isogit from 'isomorphic-git';
import { simpleGit } from 'simple-git';
import type { Layer, VersionId, VersionStatus } from '../model';
import { analyzeChanges, type FileChange, type KeyChange } from './changes';
import { versionNumber, type LedgerEntry, type PromotedLine } from './ledger';
import { catFileBatch } from './git';
import { HarnessError, type Harness } from './repo';
import { resolveRev } from './versions';

/**
 * The lineage: the tree of versions with status, primary metric (value and delta to the
 * parent), target metric and decision. Read in a fixed number of git processes whatever
 * the number of versions (for-each-ref, ls-tree, one cat-file --batch) — the benchmark
 * (`npm run bench:lineage`) compares this with isomorphic-git's in-process reads and with
 * a bare `git for-each-ref`.
 */

export interface MetricCell {
  name: string;
  value: number | null;
  delta: number | null;
}

export interface LineageNode {
  id: VersionId;
  parent: VersionId | null;
  children: VersionId[];
  branch: string;
  status: VersionStatus;
  layer: Layer;
  commit: string;
  /** `ok`; `moved` when the branch tip is not the recorded commit; `missing`; `remote` in a clone without local branches. */
  branchState: 'ok' | 'moved' | 'missing' | 'remote';
  hypothesis: string | null;
  successCriterion: string | null;
  primary: MetricCell | null;
  target: MetricCell | null;
  decision: { decision: string; by: string; reasons: string } | null;
  skill: string | null;
  createdAt: string;
}

export interface Lineage {
  promoted: { version: VersionId; commit: string; tipMatches: boolean } | null;
  versions: LineageNode[];
}

export interface LineageSnapshot {
  /** Short branch name → tip; remote-tracking ones as `remote:evo/…`. */
  tips: Map<string, string>;
  entries: LedgerEntry[];
  promoted: PromotedLine | null;
}

export type LineageReader = 'git' | 'isomorphic-git';

/** Chosen by `npm run bench:lineage` (see the numbers in its output). */
export const DEFAULT_READER: LineageReader = 'git';

function tipsFromRefs(lines: [string, string][]): Map<string, string> {
  const tips = new Map<string, string>();
  for (const [oid, ref] of lines) {
    if (ref.startsWith('refs/heads/')) tips.set(ref.slice(11), oid);
    else {
      const m = /^refs\/remotes\/[^/]+\/(evo\/.*)$/.exec(ref);
      if (m && !tips.has(`remote:${m[1]}`)) tips.set(`remote:${m[1]}`, oid);
    }
  }
  return tips;
}

const ledgerOid = (tips: Map<string, string>) => tips.get('evo/ledger') ?? tips.get('remote:evo/ledger') ?? null;

/** simple-git for the ref and tree listings; one `cat-file --batch` for every ledger file (simple-git has no stdin). */
async function readWithGit(h: Harness): Promise<LineageSnapshot> {
  const sg = simpleGit({ baseDir: h.root });
  const refs = await sg.raw(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/evo/', 'refs/remotes/']);
  const tips = tipsFromRefs(refs.split('\n').filter(Boolean).map((l) => [l.slice(0, 40), l.slice(41)]));
  const oid = ledgerOid(tips);
  if (!oid) return { tips, entries: [], promoted: null };
  // Blob ids, not `ledger:versions/vN.json` paths: cat-file then skips a tree walk per file (8× faster at 1,000).
  const listing = (await sg.raw(['ls-tree', '-r', '-z', oid])).split('\0').filter(Boolean);
  const blobOf = (l: string) => l.slice(l.indexOf(' blob ') + 6, l.indexOf('\t'));
  const blobIds = listing.filter((l) => /\tversions\/[^/]+\.json$/.test(l)).map(blobOf);
  const promotedLine = listing.find((l) => l.endsWith('\tpromoted.json'));
  const promotedId = promotedLine ? blobOf(promotedLine) : null;
  const blobs = await catFileBatch(h.root, promotedId ? [...blobIds, promotedId] : blobIds);
  const promotedText = promotedId ? blobs.get(promotedId) : null;
  const entries = blobIds.map((id) => blobs.get(id)).filter((t): t is string => typeof t === 'string').map((t) => JSON.parse(t) as LedgerEntry);
  return { tips, entries, promoted: promotedText ? (JSON.parse(promotedText) as PromotedLine) : null };
}

/** isomorphic-git: everything in-process (refs, trees, blobs from packs), one shared cache. */
async function readWithIsomorphicGit(h: Harness): Promise<LineageSnapshot> {
  const cache = {};
  const gitdir = h.commonDir;
  const local = await isogit.listRefs({ fs, gitdir, filepath: 'refs/heads/evo' });
  const lines: [string, string][] = [];
  for (const name of local) lines.push([await isogit.resolveRef({ fs, gitdir, ref: `refs/heads/evo/${name}` }), `refs/heads/evo/${name}`]);
  for (const remote of await isogit.listRemotes({ fs, gitdir }).catch(() => [])) {
    const names = await isogit.listRefs({ fs, gitdir, filepath: `refs/remotes/${remote.remote}/evo` }).catch(() => [] as string[]);
    for (const name of names) lines.push([await isogit.resolveRef({ fs, gitdir, ref: `refs/remotes/${remote.remote}/evo/${name}` }), `refs/remotes/${remote.remote}/evo/${name}`]);
  }
  const tips = tipsFromRefs(lines);
  const oid = ledgerOid(tips);
  if (!oid) return { tips, entries: [], promoted: null };
  const dec = new TextDecoder();
  const { tree } = await isogit.readTree({ fs, gitdir, oid, filepath: 'versions', cache });
  const entries: LedgerEntry[] = [];
  for (const e of tree) {
    if (!e.path.endsWith('.json')) continue;
    const { blob } = await isogit.readBlob({ fs, gitdir, oid: e.oid, cache });
    entries.push(JSON.parse(dec.decode(blob)) as LedgerEntry);
  }
  const promoted = await isogit.readBlob({ fs, gitdir, oid, filepath: 'promoted.json', cache }).then(
    (b) => JSON.parse(dec.decode(b.blob)) as PromotedLine,
    () => null,
  );
  return { tips, entries, promoted };
}

export async function readLineageSnapshot(h: Harness, reader: LineageReader = DEFAULT_READER): Promise<LineageSnapshot> {
  return reader === 'git' ? readWithGit(h) : readWithIsomorphicGit(h);
}

function cell(name: string | null, entry: LedgerEntry, parent: LedgerEntry | undefined): MetricCell | null {
  if (!name) return null;
  const value = entry.metrics[name] ?? null;
  const pv = parent?.metrics[name];
  return { name, value, delta: value !== null && pv !== undefined ? Number((value - pv).toPrecision(12)) : null };
}

export function buildLineage(s: LineageSnapshot): Lineage {
  const byId = new Map(s.entries.map((e) => [e.id, e]));
  const children = new Map<string, VersionId[]>();
  for (const e of s.entries) if (e.parent) children.set(e.parent, [...(children.get(e.parent) ?? []), e.id]);
  const versions = [...s.entries]
    .sort((a, b) => versionNumber(a.id) - versionNumber(b.id))
    .map((e): LineageNode => {
      const parent = e.parent ? byId.get(e.parent) : undefined;
      const tip = s.tips.get(e.branch);
      const remoteTip = s.tips.get(`remote:${e.branch}`);
      const crit = e.hypothesis?.targetMetric ?? null;
      return {
        id: e.id,
        parent: e.parent,
        children: (children.get(e.id) ?? []).sort((a, b) => versionNumber(a) - versionNumber(b)),
        branch: e.branch,
        status: e.status,
        layer: e.layer,
        commit: e.commit,
        branchState: tip ? (tip === e.commit ? 'ok' : 'moved') : remoteTip ? 'remote' : 'missing',
        hypothesis: e.hypothesis?.change ?? null,
        successCriterion: e.hypothesis?.successCriterion ?? null,
        primary: cell(e.primaryMetric, e, parent),
        target: crit ? cell(crit, e, parent) : null,
        decision: e.decision ? { decision: e.decision.decision, by: e.decision.decidedBy, reasons: e.decision.reasons.map((r) => r.detail).join('; ') } : null,
        skill: e.skill?.id ?? null,
        createdAt: e.createdAt,
      };
    });
  const p = s.promoted;
  const promotedTip = s.tips.get('evo/promoted') ?? s.tips.get('remote:evo/promoted');
  return { promoted: p ? { version: p.version, commit: p.commit, tipMatches: promotedTip === p.commit } : null, versions };
}

export async function lineage(h: Harness, reader: LineageReader = DEFAULT_READER): Promise<Lineage> {
  return buildLineage(await readLineageSnapshot(h, reader));
}

const fmt = (n: number | null) => (n === null ? '—' : String(Number(n.toPrecision(6))));
const fmtDelta = (n: number | null) => (n === null ? '' : ` (${n >= 0 ? '+' : ''}${fmt(n)})`);

/** The tree as text, children under their parent, the promoted line marked. */
export function formatLineage(l: Lineage): string {
  if (!l.versions.length) return 'No versions yet. Create the harness with `evotrainer init DIR`.';
  const byId = new Map(l.versions.map((v) => [v.id, v]));
  const lines: string[] = [];
  const line = (v: LineageNode) => {
    const parts = [v.id, v.status.padEnd(10)];
    if (v.primary) parts.push(`${v.primary.name} ${fmt(v.primary.value)}${fmtDelta(v.primary.delta)}`);
    if (v.target && v.target.name !== v.primary?.name) parts.push(`target ${v.target.name} ${fmt(v.target.value)}${fmtDelta(v.target.delta)}`);
    if (v.decision && v.id !== 'v0') parts.push(`${v.decision.decision} by ${v.decision.by}${v.status === 'rejected' ? `: ${v.decision.reasons}` : ''}`);
    if (v.skill) parts.push(`skill ${v.skill}`);
    parts.push(v.branch + (v.branchState === 'ok' ? '' : ` [branch ${v.branchState}]`));
    if (l.promoted?.version === v.id) parts.push('★ promoted');
    return parts.join('  ');
  };
  const walk = (v: LineageNode, prefix: string, last: boolean, root: boolean) => {
    lines.push(root ? line(v) : `${prefix}${last ? '└─ ' : '├─ '}${line(v)}`);
    const next = root ? '' : `${prefix}${last ? '   ' : '│  '}`;
    v.children.forEach((c, i) => {
      const child = byId.get(c);
      if (child) walk(child, next, i === v.children.length - 1, false);
    });
  };
  for (const v of l.versions) if (!v.parent || !byId.has(v.parent)) walk(v, '', true, true);
  if (l.promoted && !l.promoted.tipMatches) lines.push(`warning: evo/promoted does not point at ${l.promoted.version} (${l.promoted.commit.slice(0, 12)}); run any write command to resume an interrupted promotion`);
  return lines.join('\n');
}

export interface VersionDiff {
  from: { label: string; commit: string };
  to: { label: string; commit: string };
  files: FileChange[];
  keys: KeyChange[];
  opaque: string[];
}

export async function diffVersions(h: Harness, a: string, b: string): Promise<VersionDiff> {
  const from = await resolveRev(h, a);
  const to = await resolveRev(h, b);
  const c = await analyzeChanges(h, from.commit, to.commit, null);
  return { from, to, files: c.files, keys: c.keys, opaque: c.opaque };
}

const show = (v: unknown) => (v === null || v === undefined ? '∅' : JSON.stringify(v));

export function formatDiff(d: VersionDiff): string {
  const out = [`${d.from.label} → ${d.to.label}`];
  if (!d.files.length) return [...out, 'no differences'].join('\n');
  out.push('', 'files:', ...d.files.map((f) => `  ${f.status} ${f.path}`));
  if (d.keys.length) {
    out.push('', 'config keys:');
    for (const k of d.keys) out.push(`  ${k.file}  ${k.key}: ${show(k.before)} → ${show(k.after)}`);
  }
  if (d.opaque.length) out.push('', `not comparable by key (unparseable): ${d.opaque.join(', ')}`);
  return out.join('\n');
}

export function assertReader(name: string): LineageReader {
  if (name !== 'git' && name !== 'isomorphic-git') throw new HarnessError(`unknown reader "${name}"; use git or isomorphic-git`);
  return name;
}
