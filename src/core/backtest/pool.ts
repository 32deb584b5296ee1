import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Socket } from 'node:net';
import { availableParallelism, constants, tmpdir } from 'node:os';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { confinement, sameIsolation, startingIsolation, workerIsolation, type WorkerIsolation } from './confine';

/**
 * Long-lived `python3` workers that run the harness's own reward and filter code over
 * cached rollouts (worker.py, JSON lines over stdin/stdout or a socket), one per core,
 * batched; several are forked from one interpreter started once (the Zygote below).
 * A call past its timeout is that item's error; a worker that hangs past the timeout
 * (harness code swallowing the alarm, a blocking C call) or dies (segfault, os._exit,
 * out of memory) is replaced, and the items it had not answered are retried one by one
 * so that only the culprit is marked errored. The backtest always goes on. Workers run
 * confined where the machine allows it (confine.ts: scrubbed environment, no network,
 * read-only filesystem but the tree and a scratch folder); `isolation` says what held.
 */

export type FunctionKind = 'verl' | 'trl' | 'group' | 'trajectory';

export interface FunctionSpec {
  /** Handle used in calls. */
  name: string;
  /** Module path relative to the pool root. */
  path: string;
  function: string;
  kind: FunctionKind;
}

export interface PoolOptions {
  /** Folder the harness code runs in (a version's tree). */
  root: string;
  python?: string;
  workers?: number;
  /** Per-call limit (per item; for TRL's batch call, per item of the batch). */
  timeoutSeconds?: number;
  /** Address-space cap of each worker. */
  memoryMb?: number;
  batchSize?: number;
  functions: FunctionSpec[];
  signal?: AbortSignal;
}

/** One item's JSON text, as a string or as its UTF-8 bytes. */
export type SerializedItem = string | Uint8Array;

/** Items serialized and joined: their JSON texts separated by commas, and where each one ends. */
export interface JoinedItems {
  joined: Uint8Array;
  /** Item i spans from just after the comma ending item i - 1 (0 for the first) to ends[i]. */
  ends: number[];
}

/** A run of items already serialized: one by one, or joined. */
export type SerializedChunk = SerializedItem[] | JoinedItems;

const countOf = (items: SerializedChunk): number => (Array.isArray(items) ? items.length : items.ends.length);

/** Items `from` to `to` (exclusive) of a run. */
function sliceItems(items: SerializedChunk, from: number, to: number): SerializedChunk {
  if (Array.isArray(items)) return items.slice(from, to);
  const start = from ? items.ends[from - 1]! + 1 : 0;
  return { joined: items.joined.subarray(start, items.ends[to - 1]), ends: items.ends.slice(from, to).map((e) => e - start) };
}

/** Item `k` of a run, alone. */
function itemAt(items: SerializedChunk, k: number): SerializedItem {
  if (Array.isArray(items)) return items[k]!;
  return items.joined.subarray(k ? items.ends[k - 1]! + 1 : 0, items.ends[k]);
}

export type CallResult = { value: unknown; error: null } | { value: null; error: string };

export class BacktestError extends Error {}

export function workerScript(): string {
  for (const p of [path.join(__dirname, 'backtest-worker.py'), path.join(__dirname, 'worker.py'), path.join(__dirname, '..', 'src', 'core', 'backtest', 'worker.py')]) {
    if (existsSync(p)) return p;
  }
  throw new BacktestError(`backtest worker script not found next to ${__dirname}; rebuild (npm run build)`);
}

interface Chunk {
  id?: number;
  from?: number;
  results?: [unknown, string | null][];
  done?: boolean;
  ready?: boolean;
  /** Ready, confined, and it checked that the confinement holds. */
  confined?: boolean;
  loaded?: string;
  /** A verl function that provably never reads its extra_info argument says so when loaded. */
  reads_extra_info?: boolean;
  error?: string;
}

const COMMA = Buffer.from(',');

/**
 * Writes `head`, the items' JSON separated by commas, and `tail`: joined items as they are
 * (not copied into one buffer), others as one string, or as bytes where an item comes as bytes.
 */
function writeCall(out: Writable, head: string, items: SerializedChunk, tail: string): void {
  if (!Array.isArray(items)) {
    out.cork();
    out.write(head);
    out.write(items.joined);
    out.write(tail);
    process.nextTick(() => out.uncork());
    return;
  }
  if (items.every((x) => typeof x === 'string')) {
    out.write(head + items.join(',') + tail);
    return;
  }
  const parts: Uint8Array[] = [Buffer.from(head)];
  items.forEach((x, i) => {
    if (i) parts.push(COMMA);
    parts.push(typeof x === 'string' ? Buffer.from(x) : x);
  });
  parts.push(Buffer.from(tail));
  out.write(Buffer.concat(parts));
}

/** How the host talks to one worker process: its requests, its answers, its stderr, its end. */
interface Channel {
  input: Writable;
  output: Readable;
  errors: Readable;
  onExit(cb: (code: number | null, signal: NodeJS.Signals | null) => void): void;
  onError(cb: (err: Error) => void): void;
  kill(): void;
}

/** The command line of a worker (or of the zygote forking several), confined as `isolation` says. */
function workerCommand(o: PoolOptions, isolation: WorkerIsolation, scratch: string, extra: Record<string, unknown> = {}) {
  const { confine, env } = confinement(isolation, scratch, [o.root]);
  const cmd = [...isolation.prefix, o.python ?? 'python3', '-u', workerScript(), JSON.stringify({ root: o.root, memory_mb: o.memoryMb ?? 0, ...confine, ...extra })];
  return { cmd, env };
}

/** A worker process of its own. */
function spawnedChannel(o: PoolOptions, isolation: WorkerIsolation, scratch: string): Channel {
  const { cmd, env } = workerCommand(o, isolation, scratch);
  const proc: ChildProcessWithoutNullStreams = spawn(cmd[0]!, cmd.slice(1), { cwd: o.root, stdio: ['pipe', 'pipe', 'pipe'], env });
  return {
    input: proc.stdin,
    output: proc.stdout,
    errors: proc.stderr,
    onExit: (cb) => proc.on('exit', cb),
    onError: (cb) => proc.on('error', cb),
    kill: () => proc.kill('SIGKILL'),
  };
}

const signalName = (n: number | null): NodeJS.Signals | null => (n === null ? null : ((Object.entries(constants.signals).find(([, v]) => v === n)?.[0] as NodeJS.Signals | undefined) ?? null));

/**
 * One interpreter started (and confined, and checked) once, that forks the pool's first
 * workers (worker.py's zygote): each talks over a socket of its own, writes its own stderr,
 * and the zygote reports its exit and kills it on request. It runs no harness code itself.
 */
class Zygote {
  private readonly proc: ChildProcess;
  private readonly exits = new Map<number, (code: number | null, signal: NodeJS.Signals | null) => void>();
  private readonly errorsOf: PassThrough[] = [];
  private gone = false;

  constructor(o: PoolOptions, isolation: WorkerIsolation, scratch: string, private readonly n: number) {
    const forks = Array.from({ length: n }, (_, k) => [3 + 2 * k, 4 + 2 * k]);
    const { cmd, env } = workerCommand(o, isolation, scratch, { forks });
    this.proc = spawn(cmd[0]!, cmd.slice(1), { cwd: o.root, stdio: ['pipe', 'pipe', 'pipe', ...forks.flat().map(() => 'pipe' as const)], env });
    // (a zygote that dies early resets its sockets: its exit says what happened)
    for (const stream of this.proc.stdio) stream?.on('error', () => {});
    createInterface({ input: this.proc.stdout! }).on('line', (line) => {
      try {
        const m = JSON.parse(line) as { exited?: number; code: number | null; signal: number | null };
        if (typeof m.exited === 'number') this.exit(m.exited, m.code, signalName(m.signal));
      } catch {
        // not a report
      }
    });
    // What the zygote says (it could not start, or confine) concerns every worker.
    this.proc.stderr!.on('data', (d: Buffer) => this.errorsOf.forEach((e) => e.write(d)));
    this.proc.on('exit', (code, signal) => {
      this.gone = true;
      for (const k of [...this.exits.keys()]) this.exit(k, code, signal);
    });
    this.proc.on('error', (err) => {
      this.gone = true;
      for (const e of this.errorsOf) e.write(`\n${err.message}`);
      for (const k of [...this.exits.keys()]) this.exit(k, null, null);
    });
  }

  private exit(k: number, code: number | null, signal: NodeJS.Signals | null): void {
    const cb = this.exits.get(k);
    this.exits.delete(k);
    if (this.gone) (this.proc.stdio[3 + 2 * k] as Socket | null)?.destroy();
    cb?.(code, signal);
  }

  channel(k: number): Channel {
    const socket = this.proc.stdio[3 + 2 * k] as Socket;
    const errors = new PassThrough();
    this.errorsOf.push(errors);
    (this.proc.stdio[4 + 2 * k] as Socket).pipe(errors, { end: false });
    return {
      input: socket,
      output: socket,
      errors,
      onExit: (cb) => {
        if (this.gone) setImmediate(() => cb(this.proc.exitCode, this.proc.signalCode));
        else this.exits.set(k, cb);
      },
      onError: () => {},
      kill: () => {
        if (this.exits.has(k) && !this.gone) this.proc.stdin!.write(JSON.stringify({ op: 'kill', worker: k }) + '\n');
      },
    };
  }

  /** Once every worker has ended: the zygote ends too (it kills any left). */
  async close(): Promise<void> {
    if (this.gone) return;
    const done = new Promise<void>((r) => this.proc.once('exit', () => r()));
    this.proc.stdin!.end();
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 2000);
    await done;
    clearTimeout(t);
  }

  kill(): void {
    if (!this.gone) this.proc.kill('SIGKILL');
  }
}

/** A call a worker has been sent and not yet answered in full. */
interface OpenCall {
  /** A message of this call. */
  chunk(m: Chunk): void;
  /** The worker said something (for any call): it is not hung. */
  alive(): void;
  /** The worker ended. */
  exit(): void;
}

class Worker {
  private listener: ((m: Chunk) => void) | null = null;
  /** Calls sent and not answered in full, by id: a worker takes them in turn, one after another. */
  private readonly calls = new Map<number, OpenCall>();
  private stderrTail = '';
  exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  /** Functions (by name) that never read their extra_info argument. */
  readonly extraInfoUnread = new Set<string>();
  private readonly exitWaiters: (() => void)[] = [];

  constructor(
    private readonly o: PoolOptions,
    private readonly isolation: WorkerIsolation,
    private readonly channel: Channel,
  ) {
    channel.input.on('error', () => {});
    // (a worker that dies with requests unread resets its socket: its exit says what happened)
    const lines = createInterface({ input: channel.output }).on('error', () => {});
    lines.on('line', (line) => {
      let m: Chunk;
      try {
        m = JSON.parse(line) as Chunk;
      } catch {
        return;
      }
      if (typeof m.id === 'number') {
        for (const c of this.calls.values()) c.alive();
        const c = this.calls.get(m.id);
        if (c) return c.chunk(m);
      }
      this.listener?.(m);
    });
    channel.errors.on('data', (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString('utf8')).slice(-4000);
    });
    channel.onExit((code, signal) => {
      this.exited = { code, signal };
      for (const c of [...this.calls.values()]) c.exit();
      this.listener?.({});
      for (const w of this.exitWaiters.splice(0)) w();
    });
    channel.onError((err) => {
      this.exited = { code: null, signal: null };
      this.stderrTail += `\n${err.message}`;
      for (const c of [...this.calls.values()]) c.exit();
      this.listener?.({});
      for (const w of this.exitWaiters.splice(0)) w();
    });
  }

  get stderr(): string {
    return this.stderrTail.trim();
  }

  describeExit(): string {
    if (!this.exited) return 'worker stopped answering';
    const { code, signal } = this.exited;
    const oom = signal === 'SIGKILL' || /MemoryError/.test(this.stderrTail);
    return `worker crashed (${signal ? `signal ${signal}` : `exit code ${code}`}${oom ? '; out of memory?' : ''})`;
  }

  /** Waits for one message matching `pred`, or rejects when the worker exits or stays silent past `idleMs`. */
  private next(pred: (m: Chunk) => boolean, idleMs: number, onChunk?: (m: Chunk) => void): Promise<Chunk> {
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout;
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          this.listener = null;
          reject(new Error('hang'));
        }, idleMs);
      };
      arm();
      this.listener = (m) => {
        if (this.exited && !('id' in m) && !m.ready && m.loaded === undefined) {
          clearTimeout(timer);
          this.listener = null;
          reject(new Error('exit'));
          return;
        }
        arm();
        onChunk?.(m);
        if (pred(m)) {
          clearTimeout(timer);
          this.listener = null;
          resolve(m);
        }
      };
      if (this.exited) this.listener({});
    });
  }

  async start(): Promise<void> {
    // The loads wait in the pipe while the interpreter starts: no round trip per function.
    for (const f of this.o.functions) this.channel.input.write(JSON.stringify({ op: 'load', ...f }) + '\n');
    let ready = false;
    let confined = false;
    const loaded = new Map<string, Chunk>();
    try {
      await this.next(
        (m) => {
          if (m.ready) {
            ready = true;
            confined = m.confined === true;
          }
          if (m.loaded !== undefined) loaded.set(m.loaded, m);
          return ready && loaded.size === this.o.functions.length;
        },
        60_000,
      );
    } catch {
      if (!ready) throw new BacktestError(`could not start ${this.o.python ?? 'python3'} for the backtest worker: ${this.stderr || this.describeExit()}; set the interpreter with the manifest's \`python:\` key or --python`);
      const f = this.o.functions.find((x) => !loaded.has(x.name))!;
      throw new BacktestError(`loading ${f.path}:${f.function} ${this.describeExit()}: ${this.stderr.slice(-800)}`);
    }
    if (this.isolation.readOnlyRoot && !confined) throw new BacktestError(`the backtest worker (${this.o.python ?? 'python3'}) did not confirm its confinement; is ${workerScript()} from this version of EvoTrainer?`);
    for (const f of this.o.functions) {
      const m = loaded.get(f.name)!;
      if (m.error) throw new BacktestError(`cannot load ${f.function}() from ${f.path} (in ${this.o.root}): ${m.error}`);
      if (m.reads_extra_info === false) this.extraInfoUnread.add(f.name);
    }
  }

  /**
   * Runs one batch (each item as its JSON text); returns the results it got, and whether
   * the worker failed before the end. A call may be sent while the one before is still
   * running: the worker takes it next, without waiting for this process in between.
   */
  async call(id: number, name: string, items: SerializedChunk, timeoutSeconds: number, wholeBatch = false): Promise<{ results: (CallResult | undefined)[]; failed: string | null }> {
    const count = countOf(items);
    const results: (CallResult | undefined)[] = new Array(count);
    // Silence past the per-call limit (plus start-up slack) means the code ignored the alarm.
    const idleMs = (timeoutSeconds > 0 ? timeoutSeconds * 1000 * (wholeBatch ? count : 1) : 600_000) + 3000;
    const answered = new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const end = (err?: Error) => {
        clearTimeout(timer);
        this.calls.delete(id);
        if (err) reject(err);
        else resolve();
      };
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => end(new Error('hang')), idleMs);
      };
      this.calls.set(id, {
        chunk: (m) => {
          m.results?.forEach(([value, error], k) => (results[m.from! + k] = error === null ? { value, error: null } : { value: null, error }));
          if (m.done) end();
        },
        alive: arm,
        exit: () => end(new Error('exit')),
      });
      arm();
    });
    if (this.exited) this.calls.get(id)?.exit();
    else writeCall(this.channel.input, `{"op":"call","id":${id},"name":${JSON.stringify(name)},"timeout":${timeoutSeconds},"items":[`, items, ']}\n');
    try {
      await answered;
      return { results, failed: null };
    } catch (err) {
      const why = (err as Error).message === 'hang' ? `timed out (hard: the code ignored the ${timeoutSeconds}s alarm)` : this.describeExit();
      this.kill();
      return { results, failed: why };
    }
  }

  /** Killed, or exited on its own. */
  get dead(): boolean {
    return this.killed || this.exited !== null;
  }

  private killed = false;

  kill(): void {
    this.killed = true;
    if (!this.exited) this.channel.kill();
  }

  async close(): Promise<void> {
    if (this.exited) return;
    const done = new Promise<void>((r) => this.exitWaiters.push(r));
    this.channel.input.end(JSON.stringify({ op: 'exit' }) + '\n');
    const t = setTimeout(() => this.kill(), 2000);
    await done;
    clearTimeout(t);
  }
}

export interface PoolStats {
  workers: number;
  calls: number;
  errors: number;
  restarts: number;
}

export class WorkerPool {
  private idle: Worker[] = [];
  /** What forked the first workers (when more than one). */
  private zygote: Zygote | null = null;
  /** Per worker started, the functions it found never read their extra_info. */
  private readonly extraInfoUnread: ReadonlySet<string>[] = [];
  private nextId = 1;
  readonly stats: PoolStats = { workers: 0, calls: 0, errors: 0, restarts: 0 };
  /** HOME and TMPDIR of the workers; with the tree, all they may write. */
  private readonly scratch = mkdtempSync(path.join(tmpdir(), 'evotrainer-worker-'));

  private constructor(
    private readonly o: PoolOptions,
    /** What confines the harness code here. */
    readonly isolation: WorkerIsolation,
  ) {}

  /**
   * Starts the workers. Where the isolation probe has not run yet for this interpreter, they
   * start at once, confined as this machine most likely allows, each checking before any
   * harness code loads that its confinement holds; only should they fail to start does the
   * probe run (it finds what holds here, and they start again that way).
   */
  static async start(o: PoolOptions): Promise<WorkerPool> {
    const python = o.python ?? 'python3';
    const starting = startingIsolation(python, workerScript());
    if ('known' in starting) return WorkerPool.startWith(o, await starting.known);
    try {
      const pool = await WorkerPool.startWith(o, starting.likely);
      starting.confirm();
      return pool;
    } catch (err) {
      const found = await workerIsolation(python, workerScript());
      if (sameIsolation(found, starting.likely)) throw err;
      return WorkerPool.startWith(o, found);
    }
  }

  private static async startWith(o: PoolOptions, isolation: WorkerIsolation): Promise<WorkerPool> {
    const pool = new WorkerPool(o, isolation);
    const n = Math.max(1, o.workers ?? availableParallelism());
    pool.stats.workers = n;
    // Several workers fork from one interpreter (started once); replacements start on their own.
    const zygote = n > 1 ? (pool.zygote = new Zygote(o, isolation, pool.scratch, n)) : null;
    const started = await Promise.allSettled(Array.from({ length: n }, (_, k) => pool.spawnWorker(zygote?.channel(k))));
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) {
      for (const s of started) if (s.status === 'fulfilled') s.value.kill();
      zygote?.kill();
      pool.removeScratch();
      throw (failed as PromiseRejectedResult).reason;
    }
    pool.idle = started.map((s) => (s as PromiseFulfilledResult<Worker>).value);
    return pool;
  }

  private async spawnWorker(channel: Channel = spawnedChannel(this.o, this.isolation, this.scratch)): Promise<Worker> {
    const w = new Worker(this.o, this.isolation, channel);
    try {
      await w.start();
    } catch (err) {
      w.kill();
      throw err;
    }
    this.extraInfoUnread.push(w.extraInfoUnread);
    return w;
  }

  /**
   * Whether function `name` may read verl's extra_info argument: false when every worker
   * found that it never does, and the caller may then leave that data out of its items.
   */
  readsExtraInfo(name: string): boolean {
    return !this.extraInfoUnread.every((s) => s.has(name));
  }

  /**
   * Calls function `name` on every item; results in item order, never throws for item
   * failures. Items come as values, or as a stream of chunks of items already serialized
   * (each one item's JSON text, as a string or its UTF-8 bytes): the workers start on the first batches while the
   * rest is still being read, and the reader waits while the workers are far behind.
   */
  async map(name: string, items: unknown[] | AsyncIterable<SerializedChunk>, onProgress?: (done: number) => void): Promise<CallResult[]> {
    const out: CallResult[] = [];
    const batch = Math.max(1, this.o.batchSize ?? 256);
    const timeout = this.o.timeoutSeconds ?? 10;
    const wholeBatch = this.o.functions.find((f) => f.name === name)?.kind === 'trl';
    const workers = this.idle.splice(0);
    const queue = new BatchQueue(workers.length * 4);
    let done = 0;
    const runner = async (worker: Worker): Promise<void> => {
      let w = worker;
      /** A batch's answers; on a failure, what it had not answered, one item at a time on a fresh worker: only the culprit fails. */
      const settle = async ({ from, texts }: Slot, call: ReturnType<Worker['call']>): Promise<void> => {
        const { results, failed } = await call;
        results.forEach((r, k) => r && (out[from + k] = r));
        if (failed) {
          for (let k = 0; k < countOf(texts); k++) {
            if (out[from + k]) continue;
            if (w.dead) {
              this.stats.restarts++;
              w = await this.spawnWorker();
            }
            const single = await w.call(this.nextId++, name, [itemAt(texts, k)], timeout);
            out[from + k] = single.results[0] ?? { value: null, error: single.failed ?? 'no result' };
          }
        }
        if (w.dead) {
          this.stats.restarts++;
          w = await this.spawnWorker();
        }
        done += countOf(texts);
        onProgress?.(done);
      };
      /** The batch sent last, whose answers are still to be read; `failed` once its call is known to have failed. */
      let sent: { slot: Slot; call: ReturnType<Worker['call']>; failed: boolean } | null = null;
      const settleSent = async () => {
        const last = sent!;
        sent = null;
        await settle(last.slot, last.call);
      };
      try {
        for (let slot = await queue.take(); slot; slot = await queue.take()) {
          if (this.o.signal?.aborted) throw new BacktestError('backtest cancelled');
          // A batch whose worker failed is settled first: what it left unanswered is retried
          // on a fresh worker that has nothing else to do.
          if (sent && (sent.failed || w.dead)) await settleSent();
          // The next batch goes out before the last one's answers are read: the worker goes
          // from one to the next without waiting for this process in between.
          const next = { slot, call: w.call(this.nextId++, name, slot.texts, timeout, wholeBatch), failed: false };
          next.call.then((r) => (next.failed = r.failed !== null)).catch(() => undefined); // settled below
          const last = sent;
          sent = next;
          if (last) await settle(last.slot, last.call);
        }
        if (sent) await settleSent();
      } catch (err) {
        queue.fail(err);
        // A batch sent and not read: the worker is stopped (its answers would go nowhere).
        if (sent) w.kill();
        throw err;
      } finally {
        if (!w.dead) this.idle.push(w);
      }
    };
    const produce = async (): Promise<number> => {
      let n = 0;
      const put = async (texts: SerializedChunk) => {
        const count = countOf(texts);
        for (let i = 0; i < count; i += batch) {
          await queue.put({ from: n, texts: sliceItems(texts, i, Math.min(count, i + batch)) });
          n += Math.min(batch, count - i);
        }
      };
      try {
        if (Array.isArray(items)) await put(items.map((x) => JSON.stringify(x) ?? 'null'));
        else for await (const chunk of items) await put(chunk);
        queue.end();
      } catch (err) {
        queue.fail(err);
        throw err;
      }
      return n;
    };
    const [total] = await Promise.all([produce(), ...workers.map(runner)]);
    out.length = total;
    this.stats.calls += total;
    for (const r of out) if (r.error !== null) this.stats.errors++;
    return out;
  }

  async close(): Promise<void> {
    await Promise.all(this.idle.splice(0).map((w) => w.close()));
    await this.zygote?.close();
    this.removeScratch();
  }

  private removeScratch(): void {
    rmSync(this.scratch, { recursive: true, force: true });
  }
}

/** A batch: its first item's index, and its items. */
interface Slot {
  from: number;
  texts: SerializedChunk;
}

/**
 * The batches of one map call between the reader and the workers: at most `limit` wait;
 * the reader's `put` waits for room, a worker's `take` for a batch (null once all are taken).
 */
class BatchQueue {
  private readonly items: Slot[] = [];
  private ended = false;
  private error: unknown = null;
  private waiters: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private wait(): Promise<void> {
    return new Promise((r) => this.waiters.push(r));
  }

  async put(b: Slot): Promise<void> {
    while (this.items.length >= this.limit && this.error === null) await this.wait();
    if (this.error !== null) throw this.error;
    this.items.push(b);
    this.wake();
  }

  async take(): Promise<Slot | null> {
    for (;;) {
      if (this.error !== null) throw this.error;
      const b = this.items.shift();
      if (b) {
        this.wake();
        return b;
      }
      if (this.ended) return null;
      await this.wait();
    }
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  fail(err: unknown): void {
    this.error ??= err;
    this.wake();
  }
}
