import type { GateDecision, Hypothesis, Intervention, Layer, VersionId, VersionStatus } from '../model';
import { casRef, catFileBatch, git, gitOut, hashObject, lsTree, mktree, revParse, ZERO_OID, type TreeEntry } from './git';
import { HarnessError, LEDGER_REF, type Harness } from './repo';

/**
 * The ledger: evidence and decisions, versioned in git on their own orphan branch
 * `evo/ledger`, one JSON file per version (`versions/v7.json`) plus `promoted.json`.
 *
 * Why a branch and not git notes: a plain `git clone` fetches branches (as
 * `origin/evo/ledger`) but never notes, and a push of `refs/heads/evo/*` carries
 * versions and their evidence together; the files are reviewable in any git UI; one file
 * per version keeps concurrent writers from conflicting; and the ledger's own history is
 * the audit log of every transition. It is written with plumbing (hash-object, mktree,
 * commit-tree) and moved by compare-and-swap, so it never touches a checkout and a
 * crash leaves either the old or the new ledger, never half of one.
 *
 * The ledger is also the journal of multi-ref operations: it is written first, the
 * version branch / promoted line follow, and `reconcile` rolls a crashed operation
 * forward from it.
 */

export interface Evidence {
  kind: 'health' | 'backtest' | 'gate' | 'job' | 'metrics' | 'note' | 'commit' | 'skill';
  summary: string;
  /** Where it came from (a file the user gave, a job id). */
  source?: string;
  /** Parsed JSON or text of the evidence file, when small enough to keep in the ledger. */
  data?: unknown;
}

export interface Transition {
  from: VersionStatus | null;
  to: VersionStatus;
  at: string;
  by: string;
  evidence: Evidence[];
}

export interface LedgerEntry {
  schema: 1;
  id: VersionId;
  branch: string;
  parent: VersionId | null;
  /** The parent's commit the branch started from. */
  base: string;
  /** The intervention commit (or `base` until one is recorded). */
  commit: string;
  status: VersionStatus;
  layer: Layer;
  createdAt: string;
  hypothesis: Hypothesis | null;
  intervention: Intervention | null;
  /** Metric values of its evaluation (and of the backtest, prefixed `backtest.`). */
  metrics: Record<string, number>;
  primaryMetric: string | null;
  transitions: Transition[];
  decision: GateDecision | null;
  /** Set when the version was created by applying a skill. */
  skill?: { id: string; sourceCommit: string | null };
  rejectReason?: string;
}

export interface PromotedLine {
  version: VersionId;
  commit: string;
  history: { version: VersionId; commit: string; at: string; by: string; fastForward: boolean }[];
}

export interface Ledger {
  /** The ledger commit read, or null when there is none yet. */
  head: string | null;
  /** Whether `head` came from a remote-tracking ref (a fresh clone). */
  remote: boolean;
  entries: Map<VersionId, LedgerEntry>;
  promoted: PromotedLine | null;
}

export const versionNumber = (id: string): number => Number(id.slice(1));

/** Local ledger first; in a fresh clone, the remote-tracking one. */
export async function ledgerHead(h: Harness): Promise<{ oid: string | null; remote: boolean }> {
  const local = await revParse(h.root, LEDGER_REF);
  if (local) return { oid: local, remote: false };
  const remotes = await gitOut(h.root, ['for-each-ref', '--format=%(objectname)', 'refs/remotes/*/evo/ledger']);
  const first = remotes.split('\n').find(Boolean);
  return { oid: first ?? null, remote: Boolean(first) };
}

function parseEntries(files: Map<string, string | null>): Map<VersionId, LedgerEntry> {
  const entries = new Map<VersionId, LedgerEntry>();
  for (const [name, text] of files) {
    if (text === null) continue;
    try {
      const e = JSON.parse(text) as LedgerEntry;
      entries.set(e.id, e);
    } catch {
      throw new HarnessError(`ledger file ${name} is not valid JSON; fix it on branch evo/ledger (\`git show ${name}\`)`);
    }
  }
  return entries;
}

export async function readLedger(h: Harness): Promise<Ledger> {
  const { oid, remote } = await ledgerHead(h);
  if (!oid) return { head: null, remote: false, entries: new Map(), promoted: null };
  // By blob id: cat-file then skips a tree walk per file.
  const files = (await lsTree(h.root, `${oid}:versions`)).filter((e) => e.name.endsWith('.json'));
  const promotedId = (await lsTree(h.root, `${oid}^{tree}`)).find((e) => e.name === 'promoted.json')?.oid;
  const blobs = await catFileBatch(h.root, promotedId ? [...files.map((f) => f.oid), promotedId] : files.map((f) => f.oid));
  const promotedText = promotedId ? blobs.get(promotedId) : null;
  if (promotedId) blobs.delete(promotedId);
  return { head: oid, remote, entries: parseEntries(blobs), promoted: promotedText ? (JSON.parse(promotedText) as PromotedLine) : null };
}

export async function readEntry(h: Harness, id: string): Promise<LedgerEntry | null> {
  const { oid } = await ledgerHead(h);
  if (!oid) return null;
  const r = await git(h.root, ['cat-file', 'blob', `${oid}:versions/${id}.json`], { allowFail: true });
  return r.code === 0 ? (JSON.parse(r.stdout) as LedgerEntry) : null;
}

export function requireEntry(ledger: Ledger, id: string): LedgerEntry {
  const e = ledger.entries.get(id as VersionId);
  if (!e) {
    const known = [...ledger.entries.keys()].sort((a, b) => versionNumber(a) - versionNumber(b));
    throw new HarnessError(`no version ${id} in the ledger (evo/ledger)${known.length ? `; known: ${known.slice(-8).join(', ')}` : '; run `evotrainer init` first'} — see \`evotrainer lineage\``);
  }
  return e;
}

export interface LedgerChange {
  entries?: LedgerEntry[];
  promoted?: PromotedLine;
  message: string;
}

const README = `# EvoTrainer ledger

Evidence and decisions for every version of this harness, written by \`evotrainer\`.
One file per version under \`versions/\`; \`promoted.json\` names the promoted line's tip.
Rejected versions stay here (and their branches stay) as negative evidence.
Share it with the versions: \`git push REMOTE 'refs/heads/evo/*:refs/heads/evo/*'\`.
`;

/**
 * Applies `mutate` to the current ledger and commits the result with compare-and-swap,
 * re-reading and retrying when another writer got there first. `mutate` returns null to
 * write nothing.
 */
export async function updateLedger(h: Harness, mutate: (ledger: Ledger) => LedgerChange | null | Promise<LedgerChange | null>): Promise<Ledger> {
  for (let attempt = 0; attempt < 8; attempt++) {
    const ledger = await readLedger(h);
    const change = await mutate(ledger);
    if (!change) return ledger;
    const localOld = ledger.remote ? ZERO_OID : (ledger.head ?? ZERO_OID);
    const root = ledger.head ? await lsTree(h.root, `${ledger.head}^{tree}`) : [];
    const versionsTree = ledger.head ? await lsTree(h.root, `${ledger.head}:versions`) : [];
    const put = async (list: TreeEntry[], name: string, content: string) => {
      const oid = await hashObject(h.root, content);
      const i = list.findIndex((e) => e.name === name);
      const entry = { mode: '100644', type: 'blob', oid, name };
      if (i === -1) list.push(entry);
      else list[i] = entry;
    };
    for (const e of change.entries ?? []) {
      await put(versionsTree, `${e.id}.json`, JSON.stringify(e, null, 2) + '\n');
      ledger.entries.set(e.id, e);
    }
    if (change.promoted) {
      await put(root, 'promoted.json', JSON.stringify(change.promoted, null, 2) + '\n');
      ledger.promoted = change.promoted;
    }
    if (!root.some((e) => e.name === 'README.md')) await put(root, 'README.md', README);
    const vt = await mktree(h.root, versionsTree);
    const i = root.findIndex((e) => e.name === 'versions');
    const vEntry = { mode: '040000', type: 'tree', oid: vt, name: 'versions' };
    if (i === -1) root.push(vEntry);
    else root[i] = vEntry;
    const tree = await mktree(h.root, root);
    const commit = await gitOut(h.root, ['commit-tree', tree, ...(ledger.head ? ['-p', ledger.head] : []), '-F', '-'], { input: change.message + '\n', env: h.commitEnv });
    if (await casRef(h.root, LEDGER_REF, commit, localOld, `evotrainer: ${change.message.split('\n')[0]}`)) {
      ledger.head = commit;
      ledger.remote = false;
      return ledger;
    }
  }
  throw new HarnessError('the ledger (evo/ledger) kept changing under this command (another evotrainer running?); rerun it');
}
