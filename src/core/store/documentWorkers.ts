/**
 * Worker threads that parse whole documents (trajectories) while the importing thread
 * appends: each reads, hashes and parses one file and serializes its text columns (see
 * documentWorker.ts); the importing thread takes the results in file order, so ids and
 * rows are the same as when it parses every file itself. The workers outlive an import
 * by a minute (a process that imports again reuses them) without keeping the process alive.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { DOCUMENT_WORKER, parseDocument, type DocumentReply, type DocumentTask, type StepRows, type WireItem } from './documentWorker';
import type { EncodedText } from './documentText';
import type { FormatName } from './importers/types';
import { ImportError, type ImporterItem } from './rows';
import type { Split } from '../model';

/** An importer item, with the text columns and step rows when a worker serialized them. */
export type PreparedItem = ImporterItem & { text?: EncodedText; steps?: StepRows };

export interface ParsedDocument {
  /** sha256 of the file's bytes, hex. */
  hash: string;
  /** The file's bytes, when they were read on this thread (the importer still has to parse them). */
  content?: Buffer;
  /** The importer's items, when the file was parsed ahead. */
  items?: PreparedItem[];
  /** Parsed by a worker thread (not by the importing thread). */
  worker?: boolean;
}

/**
 * Threads the pool starts by default: one per core, at least two (appending takes the
 * importing thread less than half its time: two workers keep it busy on two cores).
 */
export function defaultDocumentWorkers(): number {
  return Math.max(2, Math.min(4, availableParallelism()));
}

/** The worker's script: the bundle's (dist/store-worker.js) or, run from source, the TypeScript through tsx. */
function workerScript(): { script: string; eval: boolean } | null {
  const bundled = path.join(__dirname, 'store-worker.js');
  if (existsSync(bundled)) return { script: bundled, eval: false };
  const source = path.join(__dirname, 'documentWorker.ts');
  if (existsSync(source)) return { script: `require('tsx/cjs/api').register(); require(${JSON.stringify(source)});`, eval: true };
  return null;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  dead: boolean;
  pending: Set<number>;
}

/** Tasks a worker holds at once: one it parses, the others waiting, so that it never idles while the importing thread appends. */
const PER_WORKER = 4;
/** How long idle workers wait for the next import before they stop. */
const IDLE_MS = 60_000;

let shared: DocumentWorkers | undefined;

export class DocumentWorkers {
  private readonly slots: Slot[] = [];
  private readonly waiting = new Map<number, { resolve: (d: ParsedDocument) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  /** Imports using the workers now: while there is one, the workers keep the process alive. */
  private users = 0;
  private idle: NodeJS.Timeout | undefined;

  private constructor(
    readonly count: number,
    where: { script: string; eval: boolean },
  ) {
    for (let i = 0; i < count; i++) {
      // Not the parent's flags (a loader such as tsx would start a thread of its own in each worker).
      const worker = new Worker(where.script, { eval: where.eval, workerData: DOCUMENT_WORKER, execArgv: [] });
      const slot: Slot = { worker, ready: false, dead: false, pending: new Set() };
      worker.on('message', (m: DocumentReply | 'ready') => {
        if (m === 'ready') slot.ready = true;
        else this.settle(slot, m);
      });
      const fail = (err: Error) => {
        slot.dead = true;
        for (const id of slot.pending) this.waiting.get(id)?.reject(err);
        slot.pending.clear();
      };
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`a document worker stopped (exit code ${code})`)));
      this.slots.push(slot);
    }
  }

  /**
   * The process's `count` workers, started unless they are already (by an earlier import),
   * for one import: call release() when it ends. Undefined when their script cannot be found.
   */
  static acquire(count: number): DocumentWorkers | undefined {
    if (count <= 0) return undefined;
    if (!shared || shared.count !== count || shared.slots.some((s) => s.dead)) {
      const where = workerScript();
      if (!where) return undefined;
      if (shared && !shared.users) void shared.close();
      shared = new DocumentWorkers(count, where);
    }
    const pool = shared;
    clearTimeout(pool.idle);
    if (pool.users++ === 0) for (const s of pool.slots) s.worker.ref();
    return pool;
  }

  /** Ends one import's use: when none is left, the workers wait a while for the next, not holding the process. */
  release(): void {
    if (--this.users > 0) return;
    for (const s of this.slots) s.worker.unref();
    this.idle = setTimeout(() => void this.close(), IDLE_MS);
    this.idle.unref();
  }

  /**
   * Parses `file` on a worker. With `wait` false, only a worker that has started and has
   * room takes it (else undefined: the caller parses it itself); with `wait`, the least
   * busy worker takes it, started or not.
   */
  parse(file: string, format: FormatName, opts: { split?: Split; verdicts?: string; maxBytes?: number }, wait: boolean): Promise<ParsedDocument> | undefined {
    const live = this.slots.filter((s) => !s.dead && (wait || (s.ready && s.pending.size < PER_WORKER)));
    if (!live.length) return undefined;
    const slot = live.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    const task: DocumentTask = { id: this.nextId++, file, format, split: opts.split, verdicts: opts.verdicts, maxBytes: opts.maxBytes };
    const done = new Promise<ParsedDocument>((resolve, reject) => this.waiting.set(task.id, { resolve, reject }));
    done.catch(() => undefined); // awaited in turn, unless the import stops first
    slot.pending.add(task.id);
    slot.worker.postMessage(task);
    return done;
  }

  /** Parses `file` on this thread, as a worker would (while the workers are starting). */
  static async parseHere(file: string, format: FormatName, opts: { split?: Split; verdicts?: string; maxBytes?: number }): Promise<ParsedDocument> {
    return fromReply(await parseDocument({ id: 0, file, format, split: opts.split, verdicts: opts.verdicts, maxBytes: opts.maxBytes }));
  }

  private settle(slot: Slot, m: DocumentReply): void {
    slot.pending.delete(m.id);
    const w = this.waiting.get(m.id);
    this.waiting.delete(m.id);
    if (!w) return;
    try {
      w.resolve({ ...fromReply(m), worker: true });
    } catch (err) {
      w.reject(err as Error);
    }
  }

  private async close(): Promise<void> {
    if (shared === this) shared = undefined;
    await Promise.all(this.slots.map((s) => s.worker.terminate().catch(() => undefined)));
  }
}

/** A worker's reply as the importer's results, or its error thrown. */
function fromReply(m: DocumentReply): ParsedDocument {
  if (!m.ok) {
    const e = m.error.importError;
    throw e ? new ImportError(e.file, e.line, e.reason, e.raw) : new Error(m.error.message);
  }
  return { hash: m.hash, items: m.items.map(fromWire) };
}

function fromWire(item: WireItem): PreparedItem {
  if ('bad' in item) return { at: item.at, error: new ImportError(item.bad.file, item.bad.line, item.bad.reason, item.bad.raw) };
  return { at: item.at, record: item.record, text: item.text, steps: item.steps };
}
