import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ImportError } from '../../src/core/store/rows';
import { withStore } from '../helpers/store';
import { repoRoot, tempDir } from '../helpers/tmp';

const bin = path.join(repoRoot, 'bin', 'evotrainer.js');

/** A verl line; `fields` replaces or adds keys (given as raw JSON text, so that a value can be what JSON.stringify never writes). */
function verlLine(i: number, fields: Record<string, string> = {}): string {
  const base: Record<string, string> = { input: JSON.stringify(`prompt ${i >> 1}`), output: JSON.stringify(`answer ${i}`), gts: '"4"', score: String(i % 2), step: '1', acc: String(i % 2 === 1) };
  return `{${Object.entries({ ...base, ...fields }).map(([k, v]) => `${JSON.stringify(k)}: ${v}`).join(', ')}}`;
}

/** A dump directory of verl files, each given as its lines. */
function dump(root: string, files: Record<string, string[]>, ending = '\n'): string {
  const dir = path.join(root, 'rollout_data');
  mkdirSync(dir, { recursive: true });
  for (const [name, lines] of Object.entries(files)) writeFileSync(path.join(dir, name), lines.map((l) => l + ending).join(''));
  return dir;
}

const COLS = `run_id, step, split, prompt_id, group_id, sample_index, prompt, response, reward, correct, raw_ref`;

/** Imports `dir` twice, through DuckDB's bulk reader and through the streaming path, into fresh stores. */
async function bothPaths(root: string, dir: string, opts: { onError?: 'fail' | 'skip' } = {}) {
  const results = [];
  for (const bulk of [true, false]) {
    const store = path.join(root, `${bulk ? 'bulk' : 'stream'}-${Math.random().toString(36).slice(2)}.duckdb`);
    results.push(
      await withStore(store, async (s) => {
        const outcome = await s.import([dir], { run: 'r', bulk, ...opts }).then(
          (summary) => ({ summary, error: undefined }),
          (error: unknown) => ({ summary: undefined, error }),
        );
        return { ...outcome, rows: await s.all<Record<string, unknown>>(`select ${COLS} from rollouts order by raw_ref`), leftovers: (await s.one<{ n: number }>(`select count(*) n from rollout_rows`))!.n };
      }),
    );
  }
  return results;
}

describe('hostile imports (real DuckDB, real files)', () => {
  it('a value no column can hold fails with the failing file:line on both paths, and --on-error skip sets just that line aside', async () => {
    // Every way a number can be out of the store's reach.
    const cases: [string, string][] = [
      ['step 3e9', verlLine(1, { step: '3000000000' })],
      ['step -3e9', verlLine(1, { step: '-3000000000' })],
      ['step 1e300', verlLine(1, { step: '1e300' })],
    ];
    for (const [what, badLine] of cases) {
      const root = tempDir();
      const dir = dump(root, { '1.jsonl': [verlLine(0), verlLine(1)], '2.jsonl': [verlLine(2), badLine, verlLine(3)] });
      const failing = path.join(dir, '2.jsonl');
      for (const r of await bothPaths(root, dir)) {
        assert.ok(r.error instanceof ImportError, `${what}: ${String(r.error)}`);
        assert.equal(r.error.message.split(': ')[0], `${failing}:2`, `${what}: names the failing file and line, not the first file`);
        assert.match(r.error.message, /step is -?(3000000000|1e\+300), outside the whole numbers the store holds/, what);
        assert.equal(r.rows.length + r.leftovers, 0, `${what}: nothing landed`);
      }
      const [bulk, stream] = await bothPaths(root, dir, { onError: 'skip' });
      assert.equal(bulk!.summary?.rollouts, 4, `${what}: ${String(bulk!.error)}`);
      assert.equal(bulk!.summary.badRecords, 1);
      assert.deepEqual(bulk!.rows, stream!.rows, what);
      assert.deepEqual(bulk!.rows.filter((row) => String(row.raw_ref).includes('2.jsonl')).map((row) => String(row.raw_ref).split(':').pop()), ['1', '3']);
    }
  });

  it("a line DuckDB refuses (over its object size) imports through the streaming path, with the rows the streaming path gives", async () => {
    const root = tempDir();
    const big = 33 * 1024 * 1024;
    const dir = dump(root, { '1.jsonl': [verlLine(0), verlLine(1, { output: JSON.stringify('x'.repeat(big)) }), verlLine(2)] });
    const [bulk, stream] = await bothPaths(root, dir);
    assert.equal(bulk!.error, undefined, String(bulk!.error));
    assert.deepEqual(bulk!.summary?.files.map((f) => [f.reader, f.rollouts]), [['stream', 3]]);
    // The import says why it was slower than usual.
    assert.match(bulk!.summary!.notes!.join('\n'), /^1 verl file\(s\) from .*rollout_data were read line by line, which is slower: DuckDB could not read them column by column \(.+\)$/);
    assert.equal(stream!.summary?.notes, undefined);
    assert.equal(String(bulk!.rows[1]!.response).length, big);
    assert.deepEqual(bulk!.rows, stream!.rows);
  });

  it('a step that is not a finite number (NaN, 1e999, -Infinity) is the file step on both paths; a fractional one is cut the same way', async () => {
    const root = tempDir();
    const dir = dump(root, { '7.jsonl': [verlLine(0), verlLine(1, { step: 'NaN' }), verlLine(2, { step: '1e999' }), verlLine(3, { step: '-Infinity' }), verlLine(4, { step: '2.7' }), verlLine(5, { step: '-2.7' })] });
    const [bulk, stream] = await bothPaths(root, dir);
    assert.equal(bulk!.error, undefined, String(bulk!.error));
    assert.equal(bulk!.summary?.files[0]!.reader, 'duckdb', 'DuckDB read the file itself');
    assert.deepEqual(bulk!.rows.map((r) => r.step), [1, 7, 7, 7, 2, -2]);
    assert.deepEqual(bulk!.rows, stream!.rows);
  });

  it("a group's samples apart in a file (interleaved prompts, a step between them) get the sample indices and lines of the streaming path", async () => {
    const root = tempDir();
    // Prompts 0 and 1 interleaved; prompt 2 at two steps (two groups, each one run); prompt 3 together.
    const dir = dump(root, {
      '1.jsonl': [verlLine(0), verlLine(2), verlLine(1), verlLine(3), verlLine(0)],
      '2.jsonl': [verlLine(4), verlLine(5, { step: '2' }), verlLine(4, { step: '2' }), verlLine(6), verlLine(7)],
    });
    const [bulk, stream] = await bothPaths(root, dir);
    assert.equal(bulk!.error, undefined, String(bulk!.error));
    assert.deepEqual(bulk!.summary?.files.map((f) => f.reader), ['duckdb', 'duckdb'], 'DuckDB read both files itself');
    const byLine = (rows: Record<string, unknown>[], file: string) =>
      rows.filter((r) => String(r.raw_ref).includes(file)).sort((a, b) => Number(String(a.raw_ref).split(':').pop()) - Number(String(b.raw_ref).split(':').pop()));
    assert.deepEqual(byLine(bulk!.rows, '1.jsonl').map((r) => r.sample_index), [0, 0, 1, 1, 2]);
    assert.deepEqual(byLine(bulk!.rows, '2.jsonl').map((r) => [r.step, r.sample_index]), [[1, 0], [2, 0], [2, 1], [1, 0], [1, 1]]);
    assert.deepEqual(bulk!.rows, stream!.rows);
  });

  it('a key given twice in a record keeps its last value on both paths', async () => {
    const root = tempDir();
    const twice = (i: number, key: string, first: string, last: string) => verlLine(i).replace(/\}$/, `, ${JSON.stringify(key)}: ${first}, ${JSON.stringify(key)}: ${last}}`);
    const dir = dump(root, {
      '1.jsonl': [
        twice(0, 'output', '"first"', '"last"'),
        twice(1, 'score', '0', '1'),
        // Escapes that look like keys inside strings, and a nested repeated key, are no duplicates.
        verlLine(2, { output: JSON.stringify('say \\"output\\": "x", "output": 1'), meta: '{"a": 1, "a": 2}' }),
        twice(3, 'inp\\"ut', '"a"', '"b"'),
      ],
    });
    const [bulk, stream] = await bothPaths(root, dir);
    assert.equal(bulk!.error, undefined, String(bulk!.error));
    assert.deepEqual(bulk!.rows, stream!.rows);
    assert.equal(bulk!.rows[0]!.response, 'last');
    assert.equal(bulk!.rows[1]!.reward, 1);
  });

  it('a record with other keys than the first (one more, one fewer, another order) is streamed: DuckDB would drop or reorder them', async () => {
    const root = tempDir();
    const dir = dump(root, {
      '1.jsonl': [verlLine(0, { tag: '"a"' }), verlLine(1, { tag: '"b"', late: '[1, 2]' })],
      '2.jsonl': [verlLine(2, { tag: '"a"' }), verlLine(3)],
      '3.jsonl': [verlLine(4, { tag: '"a"', note: '"n"' }), verlLine(5, { note: '"m"', tag: '"b"' })],
      '4.jsonl': [verlLine(6, { tag: '"a"' }), verlLine(7, { tag: '"b"' })],
    });
    const extras: { raw_ref: string; extra: string | null }[][] = [];
    for (const bulk of [true, false]) {
      await withStore(path.join(root, `${bulk}.duckdb`), async (s) => {
        const r = await s.import([dir], { run: 'r', bulk });
        if (bulk) assert.deepEqual(r.files.map((f) => f.reader), ['stream', 'stream', 'stream', 'duckdb']);
        extras.push(await s.all<{ raw_ref: string; extra: string | null }>(`select raw_ref, extra from rollouts order by raw_ref`));
      });
    }
    assert.deepEqual(extras[0], extras[1]);
    assert.equal(extras[0]![1]!.extra, '{"tag":"b","late":[1,2]}');
  });

  it('a dump whose rollouts turn multi-turn after its first 64 KB is streamed: each multi-turn rollout gets the steps and turns the streaming path gives', async () => {
    // Single-turn answers fill the head the plan is made from; later lines are agent transcripts,
    // with the chat template's markers, or decoded without them (a tool round in plain text).
    const single = Array.from({ length: 300 }, (_, i) => verlLine(i, { output: JSON.stringify(`answer ${i} ${'x'.repeat(300)}`) }));
    const marked = 'look first\n```bash\nls\n```<|im_end|>\n<|im_start|>user\n<tool_response>\n<returncode>0</returncode>\n<output>\na.py\n</output>\n</tool_response><|im_end|>\n<|im_start|>assistant\nsubmit';
    const plain = '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>\nuser\n<tool_response>\na.py\n</tool_response>\nassistant\ndone';
    for (const [what, output] of [['chat-template markers', marked], ['a plain tool round', plain]] as const) {
      const root = tempDir();
      const dir = dump(root, { '1.jsonl': [...single, verlLine(300, { output: JSON.stringify(output) }), verlLine(301)] });
      assert.ok(single.join('\n').length > 64 * 1024, 'the multi-turn line comes after the head');
      const seen: { reader: string; steps: number; turns: unknown[] }[] = [];
      for (const bulk of [true, false]) {
        await withStore(path.join(root, `${bulk}.duckdb`), async (s) => {
          const r = await s.import([dir], { run: 'r', bulk });
          const turns = await s.all<{ n: number | null }>(`select num_turns n from rollouts order by id`);
          seen.push({ reader: r.files[0]!.reader, steps: r.steps, turns: turns.map((t) => t.n) });
        });
      }
      assert.equal(seen[0]!.reader, 'stream', `${what}: the bulk reader would store the transcript as one answer`);
      assert.ok(seen[1]!.steps > 0, `${what}: the streaming path splits the transcript into steps`);
      assert.deepEqual(seen[0], seen[1], what);
    }
  });

  it("reward components and extra hold what the streaming path stores: Python's whole floats stay on the bulk path, other number forms and repeated nested keys are streamed", async () => {
    const cases: [string, Record<string, string>, 'duckdb' | 'stream'][] = [
      ["Python's whole floats", { eff: '1.0', pen: '0.25', meta: '{"x": 1.0, "y": [2.5, 3.0], "s": "v1.0"}' }, 'duckdb'],
      // (the bulk path drops `.0` before `,` `}` `]` by plain replacement, so text like that in a string streams the file)
      ['a string holding "1.0,"', { eff: '1.0', meta: '{"s": "1.0, kept"}' }, 'stream'],
      ['an exponent and a trailing zero', { eff: '1.0', meta: '{"y": [2.50, 1e5]}' }, 'stream'],
      ['a key twice in a nested object', { eff: '1.0', meta: '{"a": {"b": 1, "b": 2}}' }, 'stream'],
    ];
    for (const [what, fields, reader] of cases) {
      const root = tempDir();
      const dir = dump(root, { '1.jsonl': [verlLine(0, fields), verlLine(1, fields)] });
      const seen: { reader: string; rows: unknown[] }[] = [];
      for (const bulk of [true, false]) {
        await withStore(path.join(root, `${bulk}.duckdb`), async (s) => {
          const r = await s.import([dir], { run: 'r', bulk });
          seen.push({ reader: r.files[0]!.reader, rows: await s.all(`select reward_components, extra from rollouts order by id`) });
        });
      }
      assert.equal(seen[0]!.reader, reader, what);
      assert.deepEqual(seen[0]!.rows, seen[1]!.rows, what);
    }
  });

  it('CR-only and CRLF line endings and a byte-order mark import like LF files, on both paths', async () => {
    const lines = [verlLine(0), verlLine(1), verlLine(2)];
    const root = tempDir();
    const reference = (await bothPaths(root, dump(path.join(root, 'lf'), { '1.jsonl': lines })))[0]!.rows;
    assert.equal(reference.length, 3);
    const strip = (rows: Record<string, unknown>[]) => rows.map((r) => ({ ...r, raw_ref: String(r.raw_ref).split('rollout_data')[1] }));
    for (const [what, dir] of [
      ['CR', dump(path.join(root, 'cr'), { '1.jsonl': lines }, '\r')],
      ['CRLF', dump(path.join(root, 'crlf'), { '1.jsonl': lines }, '\r\n')],
      ['BOM', dump(path.join(root, 'bom'), { '1.jsonl': [`\uFEFF${lines[0]}`, ...lines.slice(1)] })],
    ] as const) {
      for (const r of await bothPaths(root, dir)) {
        assert.equal(r.error, undefined, `${what}: ${String(r.error)}`);
        assert.deepEqual(strip(r.rows), strip(reference), what);
      }
    }
  });

  it('imports a symlinked dump file inside a directory, and lists links it does not follow and pipes it does not open', async () => {
    const root = tempDir();
    const real = dump(path.join(root, 'real'), { '1.jsonl': [verlLine(0), verlLine(1)] });
    const dir = path.join(root, 'linked', 'rollout_data');
    mkdirSync(dir, { recursive: true });
    symlinkSync(path.join(real, '1.jsonl'), path.join(dir, '1.jsonl'));
    symlinkSync(path.join(root, 'nowhere.jsonl'), path.join(dir, '2.jsonl'));
    symlinkSync(real, path.join(dir, '3.jsonl'));
    assert.equal(spawnSync('mkfifo', [path.join(dir, '4.jsonl')]).status, 0);
    await withStore(path.join(root, 's.duckdb'), async (s) => {
      const summary = await s.import([dir], { run: 'r' });
      assert.equal(summary.rollouts, 2);
      assert.deepEqual(summary.ignored, [
        { file: path.join(dir, '2.jsonl'), reason: 'a broken symlink' },
        { file: path.join(dir, '3.jsonl'), reason: 'a symlink to a directory, not followed' },
        { file: path.join(dir, '4.jsonl'), reason: 'a named pipe (FIFO), not read' },
      ]);
    });
  });

  it('refuses a FIFO, a device or a link to one given as the path, at once and with the store untouched', async () => {
    const root = tempDir();
    const store = path.join(root, 's.duckdb');
    const fifo = path.join(root, '5.jsonl');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
    const zero = path.join(root, 'rollout_data', '6.jsonl');
    mkdirSync(path.dirname(zero));
    symlinkSync('/dev/zero', zero);
    for (const [target, kind] of [
      [fifo, 'a named pipe \\(FIFO\\)'],
      ['/dev/zero', 'a character device'],
      [zero, 'a character device'],
    ]) {
      // Before the check, open() on the FIFO blocked forever, deaf to SIGTERM (and /dev/zero grew without end): the timeout turns that into a failure.
      const r = spawnSync(process.execPath, [bin, 'import', target!, '--format', 'verl', '--store', store], { encoding: 'utf8', timeout: 20_000, killSignal: 'SIGKILL' });
      assert.equal(r.error, undefined, `${target}: ${String(r.error)}`);
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`${target}: ${kind}, not a regular file; import reads regular files only \\(copy the data into a file first\\)`));
    }
    await withStore(store, async (s) => assert.deepEqual(await s.counts(), { runs: 0, rollouts: 0, steps: 0, groups: 0, imports: 0, quarantined: 0 }));
  });

  // Both formats DuckDB reads itself: verl dumps and prime-rl traces.
  const killDumps: [string, (root: string) => string][] = [
    ['verl', (root) => dump(root, { '1.jsonl': Array.from({ length: 40_000 }, (_, i) => verlLine(i, { output: JSON.stringify(`${'w'.repeat(2000)} ${i}`) })) })],
    [
      'prime-rl',
      (root) => {
        const dir = path.join(root, 'run', 'rollouts', 'step_1', 'train', 'all');
        mkdirSync(dir, { recursive: true });
        const line = (i: number) => `{"example_id": ${i >> 3}, "prompt": [{"role": "user", "content": "q ${i >> 3}"}], "completion": [{"role": "assistant", "content": "${'w'.repeat(2000)} ${i}"}], "reward": ${i % 2}.0, "metrics": {"acc": ${i % 2}.0}, "kind": "train"}\n`;
        writeFileSync(path.join(dir, 'traces.jsonl'), Array.from({ length: 40_000 }, (_, i) => line(i)).join(''));
        return path.join(root, 'run');
      },
    ],
  ];
  for (const [format, makeDump] of killDumps) it(`SIGTERM ends an import promptly while DuckDB reads the files (${format}), with exit 143 and the store as it was`, async () => {
    const root = tempDir();
    const dir = makeDump(root);
    const store = path.join(root, 's.duckdb');
    const child = spawn(process.execPath, [bin, 'import', dir, '--store', store], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, EVOTRAINER_TRACE: '1' } });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    // Signal once DuckDB has started on the files (the import has opened the store and planned the read).
    for (let i = 0; i < 400 && !existsSync(store); i++) await new Promise((r) => setTimeout(r, 25));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(child.exitCode, null, `still importing: ${stderr}`);
    const sent = performance.now();
    child.kill('SIGTERM');
    const code = await exited;
    const ms = performance.now() - sent;
    assert.equal(code, 143, stderr);
    assert.match(stderr, /the store is as it was/);
    assert.doesNotMatch(stderr, /\[store\] (inserted|checked)/, 'DuckDB did not finish reading first');
    assert.ok(ms < 3000, `ended ${ms.toFixed(0)} ms after the signal`);
    await withStore(store, async (s) => assert.equal((await s.one<{ n: number }>(`select count(*) n from rollout_rows`))!.n, 0));
  });

  it('an aborted import stops both insert lanes: nothing lands, the settings are back, the store goes on working', async () => {
    const root = tempDir();
    const big = (n: number) => Array.from({ length: 40_000 }, (_, i) => verlLine(i, { step: String(n), output: JSON.stringify(`${'w'.repeat(2000)} ${i}`) }));
    const dir = dump(root, { '1.jsonl': big(1), '2.jsonl': big(2) });
    await withStore(path.join(root, 's.duckdb'), async (s) => {
      const settings = `select current_setting('threads') t, current_setting('memory_limit') m, current_setting('allocator_flush_threshold') f, current_setting('disabled_optimizers') o, current_setting('write_buffer_row_group_count') w`;
      const before = await s.one(settings);
      const abort = new AbortController();
      const importing = s.import([dir], { run: 'r', signal: abort.signal, bulkLaneRows: 1 });
      await new Promise((r) => setTimeout(r, 400));
      const sent = performance.now();
      abort.abort();
      await assert.rejects(importing, (e: unknown) => e instanceof ImportError && /interrupted/.test(e.message));
      const ms = performance.now() - sent;
      assert.ok(ms < 3000, `ended ${ms.toFixed(0)} ms after the signal`);
      assert.equal((await s.one<{ n: number }>(`select count(*) n from rollout_rows`))!.n, 0);
      // (the memory limit reads back to a tenth of a MiB, and is set back from that text)
      const mib = (r: Record<string, unknown> | undefined) => ({ ...r, m: Math.round(parseFloat(String(r?.m))) });
      assert.deepEqual(mib(await s.one(settings)), mib(before));
      const again = await s.import([dir], { run: 'r', bulkLaneRows: 1 });
      assert.deepEqual([again.rollouts, again.files.map((f) => f.reader)], [80_000, ['duckdb', 'duckdb']]);
    });
  });
});
