import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { WorkerPool, workerScript } from '../../../src/core/backtest/pool';
import { tempDir } from '../../helpers/tmp';

/** The python3 worker pool, on real python3 with harness code that misbehaves. */
const REWARD = `
import os, time
def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str == "hang":          # swallows the alarm: only the host's watchdog can stop it
        while True:
            try:
                time.sleep(10)
            except BaseException:
                pass
    if solution_str == "slow":
        time.sleep(60)
    if solution_str == "crash":
        os._exit(3)
    if solution_str == "raise":
        raise ValueError("bad input")
    if solution_str == "exit":
        raise SystemExit(0)
    if solution_str == "hog":
        return len(bytearray(2 * 1024 * 1024 * 1024))
    if solution_str == "print":
        print("noise on stdout must not break the protocol")
    if solution_str == "nan":
        return float("nan")
    return {"score": float(solution_str == ground_truth), "acc": solution_str == ground_truth, "pred": solution_str}

def reward_func(prompts, completions, **columns):
    if "boom" in completions:
        raise RuntimeError("batch failed")
    return [float(c == a) for c, a in zip(completions, columns["answer"])]
`;

describe('backtest worker pool (python3)', () => {
  const dir = tempDir('evotrainer-pool-');
  let pool: WorkerPool;
  before(async () => {
    mkdirSync(path.join(dir, 'reward'));
    writeFileSync(path.join(dir, 'reward', 'r.py'), REWARD);
    writeFileSync(path.join(dir, 'reward', 'broken.py'), 'def compute_score(:\n');
    pool = await WorkerPool.start({
      root: dir,
      workers: 2,
      timeoutSeconds: 1,
      memoryMb: 1024,
      batchSize: 4,
      functions: [
        { name: 'verl', path: 'reward/r.py', function: 'compute_score', kind: 'verl' },
        { name: 'trl', path: 'reward/r.py', function: 'reward_func', kind: 'trl' },
      ],
    });
  });
  after(() => pool?.close());

  const item = (s: string) => ({ data_source: 'x', solution_str: s, ground_truth: 'a', extra_info: null });

  it('marks the hanging, slow, crashing, raising and exiting calls errored and scores the rest', async () => {
    const inputs = ['a', 'b', 'hang', 'a', 'crash', 'slow', 'raise', 'exit', 'hog', 'print', 'nan', 'a'];
    const r = await pool.map('verl', inputs.map(item));
    const by = Object.fromEntries(inputs.map((s, i) => [s + i, r[i]]));
    assert.deepEqual(by.a0, { value: { score: 1, acc: 1, pred: 'a' }, error: null });
    assert.deepEqual(by.b1!.value, { score: 0, acc: 0, pred: 'b' });
    assert.match(by.hang2!.error!, /timed out \(hard: the code ignored the 1s alarm\)/);
    assert.match(by.crash4!.error!, /worker crashed \(exit code 3\)/);
    assert.match(by.slow5!.error!, /timed out after 1s/);
    assert.match(by.raise6!.error!, /ValueError: bad input at reward\/r\.py:\d+/);
    assert.match(by.exit7!.error!, /SystemExit/);
    assert.match(by.hog8!.error!, /MemoryError/);
    assert.equal((by.print9!.value as { score: number }).score, 0);
    assert.equal(by.nan10!.value, null);
    assert.deepEqual(by.a11!.value, { score: 1, acc: 1, pred: 'a' });
    assert.ok(pool.stats.restarts >= 2);
  });

  it('keeps working after the failures: 20,000 calls in order', async () => {
    const items = Array.from({ length: 20_000 }, (_, i) => item(i % 3 === 0 ? 'a' : 'z'));
    const r = await pool.map('verl', items);
    assert.equal(r.length, 20_000);
    r.forEach((x, i) => assert.equal((x.value as { score: number }).score, i % 3 === 0 ? 1 : 0));
  });

  it("calls TRL's batch signature, and isolates a failing batch to its culprit", async () => {
    const trl = (c: string) => ({ prompt: 'p', completion: c, columns: { answer: 'a' } });
    const r = await pool.map('trl', ['a', 'b', 'a', 'boom', 'a'].map(trl));
    assert.deepEqual(r.map((x) => x.value), [1, 0, 1, null, 1]);
    assert.match(r[3]!.error!, /RuntimeError: batch failed/);
  });

  it('a batch sent behind one whose worker crashes or hangs is scored on a fresh worker, in order', async () => {
    // One worker: each batch goes out while the one before it runs, so the batches behind
    // the crash and the hang were sent to a worker that then died.
    const one = await WorkerPool.start({ root: dir, workers: 1, timeoutSeconds: 1, memoryMb: 1024, batchSize: 2, functions: [{ name: 'verl', path: 'reward/r.py', function: 'compute_score', kind: 'verl' }] });
    try {
      const inputs = ['a', 'crash', 'a', 'b', 'hang', 'a', 'b', 'a'];
      const r = await one.map('verl', inputs.map(item));
      assert.deepEqual(
        r.map((x) => (x.error ? x.error.split(' (')[0] : (x.value as { score: number }).score)),
        [1, 'worker crashed', 1, 0, 'timed out', 1, 0, 1],
      );
      assert.ok(one.stats.restarts >= 2, `restarts ${one.stats.restarts}`);
    } finally {
      await one.close();
    }
  });

  for (const workers of [1, 2]) {
    it(`a module that does not load is a clear error naming the file (${workers} worker(s)${workers > 1 ? ', forked' : ''})`, async () => {
      await assert.rejects(WorkerPool.start({ root: dir, workers, functions: [{ name: 'x', path: 'reward/broken.py', function: 'compute_score', kind: 'verl' }] }), /cannot load compute_score\(\) from reward\/broken\.py .*SyntaxError/);
      await assert.rejects(WorkerPool.start({ root: dir, workers, functions: [{ name: 'x', path: 'reward/r.py', function: 'nope', kind: 'verl' }] }), /has no function nope\(\)/);
      await assert.rejects(WorkerPool.start({ root: dir, workers, python: 'no-such-python3', functions: [] }), /could not start no-such-python3/);
    });
  }

  it('one interpreter forks the workers, reports how each ended and kills one on request', async () => {
    // worker.py as a pool starts it with several workers (unconfined here: the protocol only)
    const proc = spawn('python3', ['-u', workerScript(), JSON.stringify({ root: dir, forks: [[3, 4], [5, 6]] })], { cwd: dir, stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'] });
    const reports: unknown[] = [];
    createInterface({ input: proc.stdout }).on('line', (l) => reports.push(JSON.parse(l)));
    const worker = (k: number) => {
      const socket = proc.stdio[3 + 2 * k] as Socket;
      const lines: Record<string, unknown>[] = [];
      createInterface({ input: socket }).on('line', (l) => lines.push(JSON.parse(l) as Record<string, unknown>));
      return { socket, lines };
    };
    const [a, b] = [worker(0), worker(1)];
    const until = async (what: () => boolean) => {
      while (!what()) await new Promise((r) => setTimeout(r, 20));
    };
    for (const w of [a, b]) w.socket.write(JSON.stringify({ op: 'load', name: 'v', path: 'reward/r.py', function: 'compute_score', kind: 'verl' }) + '\n');
    await until(() => a.lines.length >= 2 && b.lines.length >= 2);
    for (const w of [a, b]) assert.deepEqual(w.lines.map((m) => Object.keys(m)[0]), ['ready', 'loaded']);
    assert.notEqual(a.lines[0]!.pid, b.lines[0]!.pid, 'two processes');
    b.socket.write(JSON.stringify({ op: 'call', id: 1, name: 'v', timeout: 5, items: [item('a'), item('crash')] }) + '\n');
    await until(() => reports.length >= 1);
    assert.deepEqual(reports[0], { exited: 1, code: 3, signal: null });
    // the other goes on
    a.socket.write(JSON.stringify({ op: 'call', id: 2, name: 'v', timeout: 5, items: [item('a')] }) + '\n');
    await until(() => a.lines.some((m) => m.done));
    assert.deepEqual((a.lines.find((m) => m.results) as { results: unknown[] }).results, [[{ score: 1, acc: 1, pred: 'a' }, null]]);
    proc.stdin.write(JSON.stringify({ op: 'kill', worker: 0 }) + '\n');
    await until(() => reports.length >= 2);
    assert.deepEqual(reports[1], { exited: 0, code: null, signal: 9 });
    const exited = new Promise<number | null>((r) => proc.on('exit', r));
    proc.stdin.end();
    assert.equal(await exited, 0);
  });
});
