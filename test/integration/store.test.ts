import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { laneSplit } from '../../src/core/store/ingest';
import { RolloutStore } from '../../src/core/store/store';
import { ImportError } from '../../src/core/store/rows';
import { fixtures, GSM8K_MAPPING, gsm8kFile, requireSharedData, sweDir } from '../helpers/data';
import { withStore } from '../helpers/store';
import { repoRoot, tempDir } from '../helpers/tmp';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

const bin = path.join(repoRoot, 'bin', 'evotrainer.js');

function verlLine(i: number, step = 1, size = 0): string {
  return JSON.stringify({ input: `prompt ${i >> 2} ${'p'.repeat(size)}`, output: `answer ${i} ${'r'.repeat(size)}`, gts: '4', score: i % 2, step, acc: i % 2 === 1 });
}

describe('rollout store (real DuckDB, real files)', () => {
  it('imports the 303 real SWE trajectories: 224 resolved, one step per message', async () => {
    const dir = tempDir();
    await withStore(path.join(dir, 'store.duckdb'), async (s) => {
      const summary = await s.import([path.join(sweDir, 'trajs')], { run: 'swe' });
      assert.equal(summary.rollouts, 303);
      assert.equal(summary.ignored.length, 0);
      const [c] = await s.all<{ n: number; resolved: number }>(`select count(*) n, sum(correct::int) resolved from rollouts`);
      assert.deepEqual(c, { n: 303, resolved: 224 });
      const labels = JSON.parse(readFileSync(path.join(sweDir, 'labels.json'), 'utf8')) as { instances: { instance_id: string; resolved: boolean }[] };
      const byId = new Map((await s.all<{ prompt_id: string; correct: boolean }>(`select prompt_id, correct from rollouts`)).map((r) => [r.prompt_id, r.correct]));
      for (const l of labels.instances) assert.equal(byId.get(l.instance_id), l.resolved, l.instance_id);
      const steps = new Map((await s.all<{ prompt_id: string; n: number }>(`select r.prompt_id, count(*) n from steps st join rollouts r on r.id = st.rollout_id group by 1`)).map((r) => [r.prompt_id, r.n]));
      for (const f of readdirSync(path.join(sweDir, 'trajs'))) {
        const doc = JSON.parse(readFileSync(path.join(sweDir, 'trajs', f), 'utf8')) as { instance_id: string; messages: unknown[] };
        assert.equal(steps.get(doc.instance_id), doc.messages.length, f);
      }
    });
  });

  it('the 303 real SWE trajectories parsed on worker threads store what this thread stores, row for row', async () => {
    const dir = tempDir();
    const rowsOf = (workers: number) =>
      withStore(path.join(dir, `w${workers}.duckdb`), async (s) => {
        const r = await s.import([path.join(sweDir, 'trajs')], { run: 'swe', workers });
        assert.equal(r.files.filter((f) => f.worker).length, workers ? 303 : 0, `files parsed by ${workers} worker(s)`);
        return {
          rollouts: await s.all(`select * exclude (import_id) from rollout_rows order by id`),
          steps: await s.all(`select * exclude (import_id) from step_rows order by rollout_id, turn`),
        };
      });
    const here = await rowsOf(0);
    const onWorkers = await rowsOf(2);
    assert.equal(here.rollouts.length, 303);
    assert.equal(here.steps.length, 25272);
    assert.deepEqual(onWorkers.rollouts, here.rollouts);
    assert.deepEqual(onWorkers.steps, here.steps);
  });

  it('trajectories of any characters, imported beside streamed JSONL, store on workers what this thread stores', async () => {
    const dir = tempDir();
    const trajs = path.join(dir, 'trajs');
    const dump = path.join(dir, 'rollout_data');
    spawnSync('mkdir', ['-p', trajs, dump]);
    const names = readdirSync(path.join(sweDir, 'trajs')).slice(0, 6);
    for (const n of names) writeFileSync(path.join(trajs, n), readFileSync(path.join(sweDir, 'trajs', n)));
    // Texts the workers hand over as UTF-8 bytes: accents, emoji, a lone surrogate (stored as U+FFFD), NUL, escapes.
    const odd = ['accents éà ﷺ', 'emoji 👍🏽 🇫🇷', 'a lone \ud800 surrogate', 'nul \u0000 and \u001b[0m', '"quoted" \\ back\\slash\n', ''];
    odd.forEach((text, i) => {
      const messages = [{ role: 'system', content: `sys ${text}` }, { role: 'user', content: text }, { role: 'assistant', content: `THOUGHT ${text}\n\`\`\`bash\nls ${i} ${text}\n\`\`\`` }, { role: 'user', content: `<returncode>0</returncode><output>${text}</output>` }];
      writeFileSync(path.join(trajs, `zz__odd-${i}.traj.json`), JSON.stringify({ instance_id: `zz__odd-${i}`, info: { exit_status: 'Submitted', submission: text }, messages }, null, i % 2 ? 2 : undefined));
    });
    writeFileSync(path.join(dump, '1.jsonl'), [0, 1, 2, 3].map((i) => verlLine(i)).join('\n') + '\n');
    const rowsOf = (workers: number) =>
      withStore(path.join(dir, `w${workers}.duckdb`), async (s) => {
        // The JSONL rows are appended value by value, the trajectories' (on workers) a chunk at a time, in one import.
        const r = await s.import([dump, trajs], { run: 'r', workers, bulk: false });
        assert.equal(r.files.filter((f) => f.worker).length, workers ? names.length + odd.length : 0);
        return {
          rollouts: await s.all(`select * exclude (import_id) from rollout_rows order by id`),
          steps: await s.all(`select * exclude (import_id) from step_rows order by rollout_id, turn`),
          lengths: await s.all<{ chars: number; len: number }>(`select response_chars chars, length(response)::integer len from rollout_rows order by id`),
        };
      });
    const here = await rowsOf(0);
    const onWorkers = await rowsOf(2);
    assert.equal(here.rollouts.length, 4 + names.length + odd.length);
    assert.deepEqual(onWorkers.rollouts, here.rollouts);
    assert.deepEqual(onWorkers.steps, here.steps);
    assert.deepEqual(onWorkers.lengths.map((r) => r.chars), onWorkers.lengths.map((r) => r.len));
    const lone = here.rollouts.find((r) => r.prompt_id === 'zz__odd-2')!;
    assert.equal(lone.extracted_answer, 'a lone \ufffd surrogate', 'a lone surrogate in text is stored as U+FFFD');
    assert.ok(String(lone.response).includes('a lone \\ud800 surrogate'), 'JSON of messages keeps it escaped');
    // Commands too (the workers' step rows go to DuckDB as JSON): as this thread stores them.
    const commands = await withStore(path.join(dir, 'w2.duckdb'), (s) => s.all<{ command: string }>(`select command from steps where action_kind <> 'message' and command like 'ls %' order by rollout_id, turn`));
    assert.ok(commands.some((c) => c.command === 'ls 2 a lone \ufffd surrogate'));
    assert.ok(commands.some((c) => c.command === 'ls 3 nul \u0000 and \u001b[0m'));
  });

  it('a streamed response keeps its length as DuckDB counts it (code points), whatever the characters', async () => {
    const dir = tempDir();
    const dump = path.join(dir, 'rollout_data');
    spawnSync('mkdir', ['-p', dump]);
    const outputs = ['plain ascii', 'accents éà and ﷺ', 'emoji 👍🏽 and a flag 🇫🇷', 'a lone \ud800 surrogate', 'nul \u0000 inside', ''];
    writeFileSync(path.join(dump, '1.jsonl'), outputs.map((output, i) => JSON.stringify({ input: `q${i}`, output, gts: '1', score: 0, step: 1, acc: false })).join('\n') + '\n');
    await withStore(path.join(dir, 'store.duckdb'), async (s) => {
      await s.import([dump], { run: 'r', bulk: false });
      const rows = await s.all<{ chars: number; len: number }>(`select response_chars chars, length(response)::integer len from rollout_rows order by id`);
      assert.deepEqual(rows.map((r) => r.chars), [11, 16, 22, 18, 12, 0]);
      assert.deepEqual(rows.map((r) => r.chars), rows.map((r) => r.len));
    });
  });

  it('a bad trajectory parsed on a worker fails the import with its file, or is skipped, as on this thread', async () => {
    const dir = tempDir();
    const dump = path.join(dir, 'trajs');
    spawnSync('mkdir', ['-p', dump]);
    const names = readdirSync(path.join(sweDir, 'trajs')).slice(0, 4);
    for (const n of names) writeFileSync(path.join(dump, n), readFileSync(path.join(sweDir, 'trajs', n)));
    const broken = path.join(dump, 'zz__broken-1.traj.json');
    writeFileSync(broken, '{"instance_id": "zz__broken-1", "info": {}, "messages": [{"role": "system", "content": "sys"}, ');
    for (const workers of [0, 1]) {
      await withStore(path.join(dir, `w${workers}.duckdb`), async (s) => {
        await assert.rejects(s.import([dump], { run: 'r', workers }), (e: unknown) => e instanceof ImportError && e.message.startsWith(`${broken}:1: not a valid JSON document`));
        assert.equal((await s.counts()).rollouts, 0, 'nothing landed');
        const skipped = await s.import([dump], { run: 'r', workers, onError: 'skip' });
        assert.deepEqual([skipped.rollouts, skipped.badRecords], [4, 1]);
        assert.equal(skipped.files.filter((f) => f.worker).length, workers ? 5 : 0);
      });
    }
  });

  it('imports GSM8K through a declared mapping: 983 groups of 4 with the given labels', async () => {
    const dir = tempDir();
    await withStore(path.join(dir, 'store.duckdb'), async (s) => {
      await s.import([gsm8kFile], { run: 'gsm8k', format: 'jsonl', mapping: GSM8K_MAPPING });
      const sizes = await s.all<{ size: number; groups: number }>(`select size, count(*) as groups from (select group_id, count(*) size from rollouts group by 1) group by 1`);
      assert.deepEqual(sizes, [{ size: 4, groups: 983 }]);
      const lines = readFileSync(gsm8kFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, { is_correct: boolean }>);
      const stored = await s.all<{ raw_ref: string; sample: string; correct: boolean; sample_index: number }>(`select raw_ref, extra->>'sample' as sample, correct, sample_index from rollouts order by id`);
      assert.equal(stored.length, 3932);
      for (const r of stored) {
        const line = Number(r.raw_ref.slice(r.raw_ref.lastIndexOf(':') + 1));
        assert.equal(r.correct, lines[line - 1]![r.sample]!.is_correct, `${r.raw_ref} ${r.sample}`);
        assert.equal(r.sample_index, GSM8K_MAPPING.samples.indexOf(r.sample));
      }
    });
  });

  it('derives verl groups from (step, prompt): two groups of three, and a val split', async () => {
    const dir = tempDir();
    await withStore(path.join(dir, 'store.duckdb'), async (s) => {
      await s.import([path.join(fixtures, 'verl')], { run: 'verl-run' });
      const groups = await s.all<{ split: string; group_id: string; n: number; idx: number[] }>(`select split, group_id, count(*) n, list(sample_index order by id) idx from rollouts group by all order by split, min(id)`);
      assert.deepEqual(groups.map((g) => [g.split, g.n, g.idx]), [['train', 3, [0, 1, 2]], ['train', 3, [0, 1, 2]], ['val', 1, [0]]]);
      assert.match(groups[0]!.group_id, /^train:12:[0-9a-f]{16}$/);
      const one = await s.getRollout(3);
      assert.equal(one!.rollout.response, '<script>alert(1)</script> I think 7', 'untrusted text is stored verbatim');
      assert.deepEqual(one!.rollout.reward_components, { format_reward: 0 });
    });
  });

  it('the bulk path (DuckDB reads verl itself) stores what the streaming path stores', async () => {
    const dir = tempDir();
    const cols = `id, run_id, step, split, prompt_id, group_id, sample_index, prompt, response, ground_truth, reward, reward_components::json::varchar as rc,
                  correct, extracted_answer, num_turns, data_source, extra, raw_ref`;
    const viaBulk = await withStore(path.join(dir, 'a.duckdb'), async (s) => {
      const r = await s.import([path.join(fixtures, 'verl')], { run: 'r' });
      assert.deepEqual(r.files.map((f) => f.reader), ['duckdb', 'duckdb']);
      return s.all(`select ${cols} from rollouts order by id`);
    });
    const viaStream = await withStore(path.join(dir, 'b.duckdb'), async (s) => {
      const r = await s.import([path.join(fixtures, 'verl')], { run: 'r', bulk: false });
      assert.deepEqual(r.files.map((f) => f.reader), ['stream', 'stream']);
      return s.all(`select ${cols} from rollouts order by id`);
    });
    assert.equal(viaBulk.length, 7);
    const numbersAsParsed = (rows: Record<string, unknown>[]) => rows.map((r) => ({ ...r, rc: r.rc === null ? null : JSON.parse(r.rc as string) }));
    assert.deepEqual(numbersAsParsed(viaBulk), numbersAsParsed(viaStream));
  });

  it('recognizes and bulk-reads a dump whose lines are longer than the head it sniffs (verl writes the score after a 100 KB response)', async () => {
    const dir = tempDir();
    const dump = path.join(dir, 'rollout_data');
    spawnSync('mkdir', ['-p', dump]);
    // 100 KB and 300 KB responses: "score" comes past the first 64 KB of the file.
    writeFileSync(path.join(dump, '1.jsonl'), [0, 1, 2, 3].map((i) => verlLine(i, 1, 100_000)).join('\n') + '\n');
    writeFileSync(path.join(dump, '2.jsonl'), [0, 1].map((i) => verlLine(i, 2, 300_000)).join('\n') + '\n');
    const cols = `run_id, step, prompt_id, group_id, sample_index, length(prompt) as p, length(response) as r, reward, correct, raw_ref`;
    const bulk = await withStore(path.join(dir, 'a.duckdb'), async (s) => {
      const r = await s.import([dump], { run: 'r' });
      assert.deepEqual(r.ignored, []);
      assert.deepEqual(r.files.map((f) => [path.basename(f.file), f.format, f.reader, f.rollouts]), [['1.jsonl', 'verl', 'duckdb', 4], ['2.jsonl', 'verl', 'duckdb', 2]]);
      return s.all(`select ${cols} from rollouts order by raw_ref`);
    });
    const streamed = await withStore(path.join(dir, 'b.duckdb'), async (s) => {
      await s.import([dump], { run: 'r', bulk: false });
      return s.all(`select ${cols} from rollouts order by raw_ref`);
    });
    assert.deepEqual(bulk, streamed);
    assert.equal(Number(bulk[4]!.r), 'answer 0 '.length + 300_000);
  });

  it('the bulk path hands files it cannot map line for line to the stream path', async () => {
    const dir = tempDir();
    const dump = path.join(dir, 'rollout_data');
    spawnSync('mkdir', ['-p', dump]);
    writeFileSync(path.join(dump, '1.jsonl'), [0, 1, 2, 3].map((i) => verlLine(i, 1)).join('\n') + '\n');
    writeFileSync(path.join(dump, '2.jsonl'), `${verlLine(0, 2)}\n${verlLine(1, 2)}\n\n${verlLine(2, 2)}\n`);
    writeFileSync(path.join(dump, '3.jsonl'), [4, 5].map((i) => verlLine(i, 3)).join('\n') + '\n');
    writeFileSync(path.join(dump, '4.jsonl'), `${verlLine(0, 4)}\n{"input": "q", "output": null, "score": 1, "step": 4, "acc": true}\n`);
    const cols = `run_id, step, split, prompt_id, group_id, sample_index, prompt, response, reward, correct, raw_ref`;
    const bulk = await withStore(path.join(dir, 'a.duckdb'), async (s) => {
      const r = await s.import([dump], { run: 'r', onError: 'skip' });
      assert.deepEqual(r.files.map((f) => [path.basename(f.file), f.reader, f.rollouts]), [['1.jsonl', 'duckdb', 4], ['2.jsonl', 'stream', 3], ['3.jsonl', 'duckdb', 2], ['4.jsonl', 'stream', 1]]);
      return s.all(`select ${cols} from rollouts order by raw_ref`);
    });
    const streamed = await withStore(path.join(dir, 'b.duckdb'), async (s) => {
      await s.import([dump], { run: 'r', onError: 'skip', bulk: false });
      return s.all(`select ${cols} from rollouts order by raw_ref`);
    });
    assert.deepEqual(bulk, streamed);
    assert.deepEqual(bulk.filter((r) => String(r.raw_ref).includes('2.jsonl')).map((r) => String(r.raw_ref).split(':').pop()), ['1', '2', '4']);
  });

  it('two insert lanes store what the streaming path stores, ids, lines and sample indices included', async () => {
    const dir = tempDir();
    const dump = path.join(dir, 'rollout_data');
    spawnSync('mkdir', ['-p', dump]);
    // Twelve files of different lengths, so that both lanes get several; in some of the
    // second half's files a group's samples are not together (their indices are counted again).
    for (let f = 1; f <= 12; f++) {
      const order = Array.from({ length: 4 + 3 * f }, (_, i) => i);
      if (f % 4 === 3) order.sort((a, b) => (a % 4) - (b % 4) || a - b);
      writeFileSync(path.join(dump, `${f}.jsonl`), order.map((i) => verlLine(i, f, f)).join('\n') + '\n');
    }
    const cols = `id, run_id, step, split, prompt_id, group_id, sample_index, prompt, response, reward, correct, raw_ref, response_chars, no_answer`;
    const rowsOf = (name: string, opts: { bulk?: boolean; bulkLaneRows?: number; onError?: 'skip' }, order = 'id') =>
      withStore(path.join(dir, `${name}.duckdb`), async (s) => {
        const r = await s.import([dump], { run: 'r', ...opts });
        return { readers: r.files.map((f) => f.reader), rows: await s.all(`select ${order === 'id' ? cols : cols.replace('id, ', '')} from rollout_rows order by ${order}`) };
      });
    const lanes = await rowsOf('lanes', { bulkLaneRows: 1 });
    const streamed = await rowsOf('stream', { bulk: false });
    assert.deepEqual(lanes.readers, Array(12).fill('duckdb'));
    assert.equal(lanes.rows.length, 12 * 4 + 3 * 78);
    assert.deepEqual(lanes.rows, streamed.rows);
    // Files the bulk path hands to the stream path, in both lanes: a blank line in the
    // first, a bad record in the second.
    writeFileSync(path.join(dump, '2.jsonl'), `${verlLine(0, 2)}\n\n${verlLine(1, 2)}\n`);
    writeFileSync(path.join(dump, '11.jsonl'), `${verlLine(0, 11)}\n{"input": "q", "output": null, "score": 1, "step": 11, "acc": true}\n${verlLine(2, 11)}\n`);
    const mixed = await rowsOf('mixed', { bulkLaneRows: 1, onError: 'skip' }, 'raw_ref');
    const mixedStreamed = await rowsOf('mixed-stream', { bulk: false, onError: 'skip' }, 'raw_ref');
    assert.deepEqual(mixed.readers.map((r, i) => [i + 1, r]).filter(([, r]) => r === 'stream'), [[2, 'stream'], [11, 'stream']]);
    assert.deepEqual(mixed.rows, mixedStreamed.rows);
  });

  it('splits a bulk group into two lanes of about equal bytes, only when each would hold enough rows', () => {
    const files = (sizes: number[]) => sizes.map((size) => ({ size, lines: size / 10 }));
    assert.equal(laneSplit(files([100, 100, 100, 100]), 1), 2);
    assert.equal(laneSplit(files([300, 100, 100, 100]), 1), 1);
    assert.equal(laneSplit(files([100, 100, 100, 300]), 1), 3);
    assert.equal(laneSplit(files([100]), 1), 1, 'one file: one lane');
    assert.equal(laneSplit(files([100, 100, 100, 100]), 20), 2);
    assert.equal(laneSplit(files([100, 100, 100, 100]), 21), 4, 'a lane of too few rows: one lane');
  });

  it('fails a malformed line with file:line and leaves the store as it was; skip and quarantine set it aside', async () => {
    const dir = tempDir();
    const good = path.join(dir, 'rollout_data', '1.jsonl');
    const badFile = path.join(dir, 'rollout_data', '2.jsonl');
    spawnSync('mkdir', ['-p', path.dirname(good)]);
    writeFileSync(good, [0, 1, 2, 3].map((i) => verlLine(i)).join('\n') + '\n');
    writeFileSync(badFile, `${verlLine(0, 2)}\n${verlLine(1, 2)}\n{"input": "q", "output": \n${verlLine(3, 2)}\n`);
    const store = path.join(dir, 'store.duckdb');
    await withStore(store, async (s) => {
      await assert.rejects(s.import([path.join(dir, 'rollout_data')], { run: 'r' }), (e: unknown) => e instanceof ImportError && e.message.startsWith(`${badFile}:3: not valid JSON`));
      assert.equal((await s.counts()).rollouts, 0, 'the good file before it did not land either');
      assert.equal((await s.one<{ n: number }>(`select count(*) n from rollout_rows`))!.n, 0);
      const skipped = await s.import([path.join(dir, 'rollout_data')], { run: 'r', onError: 'skip' });
      assert.equal(skipped.rollouts, 7);
      assert.equal(skipped.badRecords, 1);
      const q = await s.import([badFile], { run: 'q', onError: 'quarantine' });
      assert.equal(q.badRecords, 1);
      assert.deepEqual(await s.all(`select line, reason, raw from quarantine`), [{ line: 3, reason: 'not valid JSON (Unexpected end of JSON input)', raw: '{"input": "q", "output": ' }]);
    });
  });

  it('concurrent lookups each get their own rollout', async () => {
    const dir = tempDir();
    await withStore(path.join(dir, 'store.duckdb'), async (s) => {
      await s.import([path.join(fixtures, 'verl')], { run: 'r' });
      const got = await Promise.all([1, 2, 3, 4, 5, 6, 7, 1, 7].map((id) => s.getRollout(id)));
      assert.deepEqual(got.map((g) => g!.rollout.id), [1, 2, 3, 4, 5, 6, 7, 1, 7]);
    });
  });

  it('re-importing the same file adds nothing', async () => {
    const dir = tempDir();
    await withStore(path.join(dir, 'store.duckdb'), async (s) => {
      const first = await s.import([path.join(fixtures, 'verl')], { run: 'r' });
      const again = await s.import([path.join(fixtures, 'verl')], { run: 'r' });
      assert.equal(first.rollouts, 7);
      assert.equal(again.rollouts, 0);
      assert.deepEqual(again.files.map((f) => f.status), ['unchanged', 'unchanged']);
      assert.equal((await s.counts()).rollouts, 7);
      // The same bytes under another name (a copied dump) are recognized by content.
      const copy = path.join(dir, 'copy', 'rollout_data');
      spawnSync('mkdir', ['-p', copy]);
      writeFileSync(path.join(copy, '12.jsonl'), readFileSync(path.join(fixtures, 'verl', 'rollout_data', '12.jsonl')));
      const copied = await s.import([copy], { run: 'r' });
      assert.deepEqual(copied.files.map((f) => f.status), ['unchanged']);
      assert.equal((await s.one<{ n: number }>(`select count(*) n from rollout_rows`))!.n, 7, 'nothing left behind');
      // A different run may hold the same file.
      assert.equal((await s.import([copy], { run: 'other' })).rollouts, 6);
    });
  });

  it('follows a growing file from the last complete line', async () => {
    const dir = tempDir();
    const f = path.join(dir, 'rollout_data', '1.jsonl');
    spawnSync('mkdir', ['-p', path.dirname(f)]);
    const lines = [0, 1, 2, 3, 4, 5].map((i) => verlLine(i));
    writeFileSync(f, `${lines[0]}\n${lines[1]}\n${lines[2]!.slice(0, 20)}`);
    await withStore(path.join(dir, 'store.duckdb'), async (s) => {
      const a = await s.import([f], { run: 'live' });
      assert.equal(a.rollouts, 2);
      const unchanged = await s.import([f], { run: 'live' });
      assert.equal(unchanged.rollouts, 0, 'the half-written line is "not yet", not an error');
      appendFileSync(f, `${lines[2]!.slice(20)}\n${lines[3]}\n${lines[4]}\n${lines[5]}\n`);
      const b = await s.import([f], { run: 'live' });
      assert.equal(b.rollouts, 4);
      assert.equal(b.files[0]!.resumed, true);
      const rows = await s.all<{ raw_ref: string; sample_index: number }>(`select raw_ref, sample_index from rollouts order by id`);
      assert.deepEqual(rows.map((r) => r.raw_ref.split(':').pop()), ['1', '2', '3', '4', '5', '6']);
      assert.deepEqual(rows.map((r) => r.sample_index), [0, 1, 2, 3, 0, 1], 'sample indices continue across the two imports');
    });
  });

  it('a killed import leaves the store as it was, and the next import succeeds', async () => {
    const dir = tempDir();
    const dump = path.join(dir, 'rollout_data');
    spawnSync('mkdir', ['-p', dump]);
    const fd = openSync(path.join(dump, '1.jsonl'), 'w');
    for (let i = 0; i < 120_000; i += 1000) writeSync(fd, Array.from({ length: 1000 }, (_, j) => verlLine(i + j, 1, 1500)).join('\n') + '\n');
    closeSync(fd);
    const store = path.join(dir, 'store.duckdb');
    await withStore(store, (s) => s.import([path.join(fixtures, 'verl')], { run: 'before' }));
    // Killed once the import has found its files and is writing them (its trace says when), not after a guessed time.
    const child = spawn(process.execPath, [bin, 'import', dump, '--run', 'big', '--store', store], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, EVOTRAINER_TRACE: '1' } });
    let trace = '';
    await new Promise<void>((resolve) => {
      child.stderr.on('data', (d: Buffer) => {
        trace += d.toString();
        if (/discovered 1 file/.test(trace)) setTimeout(resolve, 300);
      });
      child.once('exit', () => resolve());
    });
    assert.equal(child.exitCode, null, `the import was still running when killed (its trace: ${trace})`);
    assert.doesNotMatch(trace, /inserted|committed/, 'killed while DuckDB was writing the rows');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    await withStore(store, async (s) => {
      assert.deepEqual(await s.counts(), { runs: 1, rollouts: 7, steps: 0, groups: 3, imports: 2, quarantined: 0 });
      assert.equal((await s.one<{ n: number }>(`select count(*) n from rollout_rows`))!.n, 7, 'partial rows were swept');
    });
    const again = spawnSync(process.execPath, [bin, 'import', dump, '--run', 'big', '--store', store, '--json'], { encoding: 'utf8' });
    assert.equal(again.status, 0, again.stderr);
    assert.equal((JSON.parse(again.stdout) as { rollouts: number }).rollouts, 120_000);
  });

  it('Ctrl-C stops an import cleanly with exit 130', async () => {
    const dir = tempDir();
    const dump = path.join(dir, 'rollout_data');
    spawnSync('mkdir', ['-p', dump]);
    writeFileSync(path.join(dump, '1.jsonl'), Array.from({ length: 60_000 }, (_, i) => verlLine(i, 1, 1500)).join('\n') + '\n');
    const store = path.join(dir, 'store.duckdb');
    const child = spawn(process.execPath, [bin, 'import', dump, '--store', store], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // Interrupt soon after the import has started (the store file exists), whatever the machine's speed.
    for (let i = 0; i < 200 && !existsSync(store); i++) await new Promise((r) => setTimeout(r, 25));
    await new Promise((r) => setTimeout(r, 250));
    assert.equal(child.exitCode, null, 'still importing');
    child.kill('SIGINT');
    const code = await new Promise((r) => child.once('exit', r));
    assert.equal(code, 130, stderr);
    assert.match(stderr, /the store is as it was/);
    await withStore(store, async (s) => assert.equal((await s.counts()).rollouts, 0));
  });
});

describe('one store file, many users in one process (the editor)', () => {
  const dir = tempDir('evotrainer-store-shared-');
  it('shares one DuckDB instance: a second open sees the first one\'s import, does not sweep it, and closing one leaves the other working', async () => {
    const file = path.join(dir, 'store.duckdb');
    const a = await RolloutStore.open(file);
    const b = await RolloutStore.open(file);
    const importing = a.import([path.join(fixtures, 'verl')], { run: 'shared' });
    const c = await RolloutStore.open(file); // opened while a's import is in flight: must not sweep its rows
    await importing;
    assert.equal((await b.counts()).rollouts, 7);
    assert.equal((await c.counts()).rollouts, 7);
    a.close();
    a.close(); // twice is harmless
    assert.equal((await b.counts()).rollouts, 7);
    b.close();
    c.close();
    const again = await RolloutStore.open(file);
    assert.equal((await again.counts()).rollouts, 7);
    again.close();
  });
});
