import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { readBytes } from '../../src/core/store/compressed';
import { shQuote } from '../../src/core/jobs/quote';
import { parseLabels, resolveLabels } from '../../src/core/diagnose/labels';
import { ImportError } from '../../src/core/store/rows';
import type { RolloutStore } from '../../src/core/store/store';
import { externalDir, fixtures, requireSharedData, sweDir } from '../helpers/data';
import { withStore } from '../helpers/store';
import { repoRoot, tempDir } from '../helpers/tmp';

requireSharedData();

const bin = path.join(repoRoot, 'bin', 'evotrainer.js');

/** The compressions import reads, by the program that writes each and its files' extension. */
const CODECS = [
  { program: 'gzip', ext: 'gz' },
  { program: 'zstd', ext: 'zst' },
  { program: 'bzip2', ext: 'bz2' },
  { program: 'xz', ext: 'xz' },
] as const;
type Codec = (typeof CODECS)[number];

/** Compresses `file` in place with the codec's program (file → file.ext), as a user would. */
function compress(file: string, codec: Codec = CODECS[0]): string {
  const r = spawnSync(codec.program, codec.program === 'zstd' ? ['-q', '--rm', file] : [file], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${codec.program} ${file}: ${r.stderr}`);
  return `${file}.${codec.ext}`;
}

/** Every file under `dir` that is a dump (not the metadata read beside one), compressed in place. */
function compressDumps(dir: string, codec: Codec = CODECS[0]): void {
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const p = path.join(e.parentPath ?? (e as unknown as { path: string }).path, e.name);
    if (e.isFile() && /\.(jsonl|traj|traj\.json)$/.test(e.name)) compress(p, codec);
  }
}

const ROLLOUT_COLS = `run_id, framework, step, split, prompt_id, group_id, sample_index, prompt, response, ground_truth, reward, reward_components::json::varchar as rc,
  correct, extracted_answer, stop_reason, response_tokens, num_turns, data_source, env_class, extra`;

/** The rows an import stored, comparable across two folders: record references relative to `root`, `.gz` dropped. */
async function stored(s: RolloutStore, root: string): Promise<{ rollouts: unknown[]; steps: unknown[]; hashes: string[] }> {
  const ref = (r: unknown) => path.relative(root, String(r)).replace(/\.(gz|zst|bz2|xz)(?=[#:]|$)/, '');
  const rollouts = (await s.all(`select ${ROLLOUT_COLS}, raw_ref from rollouts`))
    .map((r) => ({ ...r, rc: r.rc === null ? null : JSON.parse(r.rc as string), raw_ref: ref(r.raw_ref) }))
    .sort((a, b) => (a.raw_ref < b.raw_ref ? -1 : a.raw_ref > b.raw_ref ? 1 : 0));
  const steps = (await s.all(`select r.raw_ref, s.* exclude (rollout_id) from steps s join rollouts r on r.id = s.rollout_id order by r.raw_ref, s.turn`)).map((r) => ({ ...r, raw_ref: ref(r.raw_ref) }));
  const hashes = (await s.all<{ h: string }>(`select content_hash as h from imports`)).map((r) => r.h).sort();
  return { rollouts, steps, hashes };
}

describe('gzip-compressed dumps (real files compressed with gzip)', () => {
  it('import as the files they compress (gzip, zstd, bzip2, xz): the same rows, steps and content hashes; lines are the uncompressed text’s', async () => {
    const root = tempDir('evotrainer-compressed-');
    const plain = path.join(root, 'plain');
    mkdirSync(plain);
    cpSync(path.join(externalDir, 'mini-swe-agent-v2'), path.join(plain, 'mini'), { recursive: true });
    cpSync(path.join(externalDir, 'verifiers', 'math_python'), path.join(plain, 'math_python'), { recursive: true });
    mkdirSync(path.join(plain, 'swe'));
    copyFileSync(path.join(externalDir, 'swe-agent', 'demos', 'ctf_web', 'i_got_id_demo.traj'), path.join(plain, 'swe', 'i_got_id_demo.traj'));
    cpSync(path.join(fixtures, 'verl'), path.join(plain, 'verl'), { recursive: true });
    const want = await withStore(path.join(root, 'plain.duckdb'), async (s) => {
      const r = await s.import([plain], { run: 'r' });
      assert.equal(r.rollouts, 24);
      return stored(s, plain);
    });
    for (const codec of CODECS) {
      const packed = path.join(root, codec.ext);
      cpSync(plain, packed, { recursive: true });
      compressDumps(packed, codec);
      const got = await withStore(path.join(root, `${codec.ext}.duckdb`), async (s) => {
        const r = await s.import([packed], { run: 'r' });
        // Each by its uncompressed name's layout; the bulk path reads plain files only.
        assert.deepEqual(
          r.files.map((f) => [path.relative(packed, f.file), f.format, f.reader, f.rollouts]),
          [
            [`math_python/results.jsonl.${codec.ext}`, 'verifiers', 'stream', 15],
            [`mini/astropy__astropy-12907.traj.json.${codec.ext}`, 'mini-swe-agent', 'stream', 1],
            [`swe/i_got_id_demo.traj.${codec.ext}`, 'swe-agent', 'stream', 1],
            [`verl/rollout_data/12.jsonl.${codec.ext}`, 'verl', 'stream', 6],
            [`verl/validation_data/12.jsonl.${codec.ext}`, 'verl', 'stream', 1],
          ],
          codec.program,
        );
        assert.deepEqual(r.ignored.map((f) => path.relative(packed, f.file)), ['math_python/metadata.json']);
        return stored(s, packed);
      });
      assert.deepEqual(got.rollouts, want.rollouts, codec.program);
      assert.deepEqual(got.steps, want.steps, codec.program);
      assert.deepEqual(got.hashes, want.hashes, `${codec.program}: the content hash is the uncompressed bytes’`);
      // verl's step comes from the name: 12.jsonl.gz is step 12.
      assert.deepEqual([...new Set((got.rollouts as { step: number; framework: string }[]).filter((r) => r.framework === 'verl').map((r) => Number(r.step)))], [12]);
    }
  });

  it('a folder of compressed trajectories is parsed by the document workers the same as its plain copy (gzip by zlib, zstd by its program)', async () => {
    const root = tempDir('evotrainer-gz-swe-');
    const names = readdirSync(path.join(sweDir, 'trajs')).sort().slice(0, 12);
    for (const side of ['plain', 'gz', 'zst']) {
      mkdirSync(path.join(root, side, 'trajs'), { recursive: true });
      // The SWE-bench reports beside them give the verdicts.
      cpSync(path.join(sweDir, 'reports'), path.join(root, side, 'reports'), { recursive: true });
      for (const n of names) copyFileSync(path.join(sweDir, 'trajs', n), path.join(root, side, 'trajs', n));
    }
    compressDumps(path.join(root, 'gz', 'trajs'), CODECS[0]);
    compressDumps(path.join(root, 'zst', 'trajs'), CODECS[1]);
    const [want, ...got] = await Promise.all(
      ['plain', 'gz', 'zst'].map((side) =>
        withStore(path.join(root, `${side}.duckdb`), async (s) => {
          const r = await s.import([path.join(root, side, 'trajs')], { run: 'swe', workers: 2 });
          assert.equal(r.rollouts, 12);
          assert.ok(r.files.every((f) => f.worker), 'every file parsed by a worker');
          return stored(s, path.join(root, side));
        }),
      ),
    );
    const noReportPath = (rows: unknown[]) => rows.map((r) => ({ ...(r as object), extra: String((r as { extra: string }).extra).replace(/"verdict_file":"[^"]*"/, '') }));
    assert.ok((want!.rollouts as { correct: boolean | null }[]).some((r) => r.correct !== null), 'the verdicts were found beside the trajectories');
    for (const g of got) {
      assert.deepEqual(noReportPath(g!.rollouts), noReportPath(want!.rollouts));
      assert.deepEqual(g!.steps, want!.steps);
      assert.deepEqual(g!.hashes, want!.hashes);
    }
  });

  it('a decoder program’s output reaches a slow reader whole, and a reader that stops early stops the program', async () => {
    const root = tempDir('evotrainer-decoder-');
    const file = path.join(root, 'big.jsonl');
    // 40 MiB of lines that compress well: more than the 16 MiB read ahead of the reader.
    const line = `${JSON.stringify({ input: 'q'.repeat(200), output: 'a'.repeat(800), score: 1 })}\n`;
    writeFileSync(file, line.repeat(Math.ceil((40 * 1024 * 1024) / line.length)));
    const want = createHash('sha256').update(readFileSync(file)).digest('hex');
    const zst = compress(file, CODECS[1]);
    const h = createHash('sha256');
    let chunks = 0;
    for await (const chunk of readBytes(zst)) {
      h.update(chunk);
      // A reader slower than zstd: the program is paused and resumed many times.
      if (++chunks % 4 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(h.digest('hex'), want);
    assert.ok(chunks >= 40, `read in chunks of about 1 MiB (${chunks})`);
    // Stopping after the first chunk ends the program (no zstd left running on the file).
    for await (const chunk of readBytes(zst, 1000)) {
      assert.ok(chunk.length > 0);
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
    const decoding = readdirSync('/proc').filter((pid) => /^\d+$/.test(pid)).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(zst);
      } catch {
        return false; // gone meanwhile
      }
    });
    assert.deepEqual(decoding, [], 'the decoder was stopped');
  });

  it('human labels name a compressed trajectory’s rollout with or without .gz', async () => {
    const root = tempDir('evotrainer-gz-labels-');
    const ids = ['django__django-13513', 'astropy__astropy-7166'];
    mkdirSync(path.join(root, 'trajs'));
    for (const id of ids) writeFileSync(path.join(root, 'trajs', `${id}.traj.json.gz`), gzipSync(readFileSync(path.join(sweDir, 'trajs', `${id}.traj.json`))));
    await withStore(path.join(root, 's.duckdb'), async (s) => {
      await s.import([path.join(root, 'trajs')], { run: 'swe' });
      const labels = parseLabels('labels.jsonl', [
        { rollout_ref: `trajs/${ids[0]}.traj.json#1`, failure_mode: 'leak' },
        { rollout_ref: `${ids[1]}.traj.json.gz`, failure_mode: 'success' },
        { rollout_ref: `trajs/${ids[1]}.traj.json`, failure_mode: 'success' },
      ].map((l) => JSON.stringify(l)).join('\n')).labels;
      const { byRollout, problems } = await resolveLabels(s, labels);
      assert.deepEqual(problems, []);
      const refs = await s.all<{ id: number; raw_ref: string }>(`select id, raw_ref from rollouts`);
      assert.deepEqual(
        [...byRollout].map(([id, l]) => [path.basename(refs.find((r) => Number(r.id) === id)!.raw_ref), l.failureMode]).sort(),
        [[`${ids[0]}.traj.json.gz#1`, 'leak'], [`${ids[1]}.traj.json.gz#1`, 'success']].sort(),
      );
    });
  });

  it('an archive of a dump is listed with the command that extracts it, which does', async () => {
    const root = tempDir('evotrainer-archive-');
    const src = path.join(root, 'src');
    mkdirSync(path.join(src, 'trajs'), { recursive: true });
    copyFileSync(path.join(externalDir, 'mini-swe-agent-v2', 'astropy__astropy-12907.traj.json'), path.join(src, 'trajs', 'astropy__astropy-12907.traj.json'));
    const dumps = path.join(root, "dumps of run 1's");
    mkdirSync(dumps);
    assert.equal(spawnSync('tar', ['-czf', path.join(dumps, 'run.tar.gz'), '-C', src, 'trajs']).status, 0);
    assert.equal(spawnSync('python3', ['-m', 'zipfile', '-c', path.join(dumps, 'run.zip'), path.join(src, 'trajs')]).status, 0);
    await withStore(path.join(root, 's.duckdb'), async (s) => {
      const r = await s.import([dumps], { run: 'r' });
      assert.equal(r.rollouts, 0);
      assert.deepEqual(r.ignored.map((f) => path.basename(f.file)), ['run.tar.gz', 'run.zip']);
      for (const f of r.ignored) {
        // The command the reason gives, run as a user would paste it.
        const command = /once extracted \((.*)\), then import that folder$/.exec(f.reason)![1]!;
        const ran = spawnSync('bash', ['-c', command], { encoding: 'utf8' });
        assert.equal(ran.status, 0, `${command}: ${ran.stderr}`);
      }
      const extracted = await s.import([path.join(dumps, 'run')], { run: 'r' });
      assert.equal(extracted.rollouts, 1, 'the extracted folder imports (both archives held the same trajectory)');
    });
  });

  it('a live .jsonl.gz that gained a gzip member continues where the last import stopped; its plain copy is the same import', async () => {
    const root = tempDir('evotrainer-gz-live-');
    const dir = path.join(root, 'math_python');
    mkdirSync(dir);
    copyFileSync(path.join(externalDir, 'verifiers', 'math_python', 'metadata.json'), path.join(dir, 'metadata.json'));
    const lines = readFileSync(path.join(externalDir, 'verifiers', 'math_python', 'results.jsonl'), 'utf8').split(/(?<=\n)/);
    const gz = path.join(dir, 'results.jsonl.gz');
    writeFileSync(gz, gzipSync(lines.slice(0, 8).join('')));
    await withStore(path.join(root, 's.duckdb'), async (s) => {
      assert.equal((await s.import([dir])).rollouts, 8);
      // What `gzip -c more >> results.jsonl.gz` does: a second member, the file's text grows.
      appendFileSync(gz, gzipSync(lines.slice(8).join('')));
      const more = await s.import([dir]);
      assert.deepEqual([more.rollouts, more.files[0]!.resumed], [7, true]);
      assert.deepEqual((await s.all<{ raw_ref: string }>(`select raw_ref from rollouts order by id`)).map((r) => path.basename(r.raw_ref)), lines.map((_, i) => `results.jsonl.gz:${i + 1}`));
      assert.deepEqual((await s.import([dir])).files.map((f) => f.status), ['unchanged']);
      writeFileSync(path.join(dir, 'results.jsonl'), lines.join(''));
      const copy = await s.import([dir]);
      assert.deepEqual([copy.rollouts, copy.files.map((f) => f.status)], [0, ['unchanged', 'unchanged']]);
      assert.equal((await s.counts()).rollouts, 15);
    });
  });

  it('a damaged or mislabelled compressed file is said of that file with how to check and recover it; nothing lands', async () => {
    const root = tempDir('evotrainer-gz-bad-');
    const dir = path.join(root, "run's dump");
    mkdirSync(dir);
    copyFileSync(path.join(externalDir, 'verifiers', 'math_python', 'metadata.json'), path.join(dir, 'metadata.json'));
    const whole = gzipSync(readFileSync(path.join(externalDir, 'verifiers', 'math_python', 'results.jsonl')));
    const cut = path.join(dir, 'results.jsonl.gz');
    writeFileSync(cut, whole.subarray(0, whole.length >> 1)); // a copy that stopped halfway
    const notGzip = path.join(root, '3.jsonl.gz');
    writeFileSync(notGzip, '{"input": "not compressed at all"}\n');
    const traj = path.join(root, 'trajs', 'astropy__astropy-12907.traj.json.gz');
    mkdirSync(path.dirname(traj));
    const doc = gzipSync(readFileSync(path.join(externalDir, 'mini-swe-agent-v2', 'astropy__astropy-12907.traj.json')));
    writeFileSync(traj, doc.subarray(0, doc.length - 100));
    await withStore(path.join(root, 's.duckdb'), async (s) => {
      for (const [file, why] of [[cut, 'unexpected end of file'], [traj, 'unexpected end of file'], [notGzip, 'incorrect header check']] as const) {
        await assert.rejects(s.import([file === cut ? dir : file]), (err: Error) => {
          assert.ok(err instanceof ImportError, err.message);
          assert.equal(err.file, file);
          assert.match(err.reason, new RegExp(`^not a readable gzip file \\(${why}\\); check it with: gzip -t `));
          assert.ok(err.reason.includes(`gzip -t ${shQuote(file)}`), err.reason);
          assert.ok(err.reason.includes(`gzip -dc ${shQuote(file)} > ${shQuote(file.slice(0, -3))}`), err.reason);
          return true;
        });
      }
      assert.equal((await s.counts()).rollouts, 0, 'the lines before the damage did not land either');
      // In a folder, a .gz that is not gzip at all is listed with the reason; the rest imports.
      writeFileSync(cut, whole);
      rmSync(notGzip);
      writeFileSync(path.join(dir, 'notes.jsonl.gz'), 'plain text');
      const r = await s.import([dir]);
      assert.equal(r.rollouts, 15);
      assert.deepEqual(r.ignored.map((f) => [path.basename(f.file), f.reason.split(';')[0]]), [
        ['metadata.json', 'vf-eval metadata: read with the results.jsonl beside it'],
        ['notes.jsonl.gz', 'not a readable gzip file (incorrect header check)'],
      ]);
    });
    // zstd and xz files damaged the same ways: their programs' own words, and their commands.
    const plainDoc = path.join(root, 'doc', 'astropy__astropy-12907.traj.json');
    mkdirSync(path.dirname(plainDoc));
    copyFileSync(path.join(externalDir, 'mini-swe-agent-v2', 'astropy__astropy-12907.traj.json'), plainDoc);
    const xz = compress(plainDoc, CODECS[3]);
    writeFileSync(xz, readFileSync(xz).subarray(0, 2000));
    const lines = path.join(root, 'zst', 'results.jsonl');
    mkdirSync(path.dirname(lines));
    copyFileSync(path.join(externalDir, 'verifiers', 'math_python', 'results.jsonl'), lines);
    const zst = compress(lines, CODECS[1]);
    writeFileSync(zst, readFileSync(zst).subarray(0, 3000));
    await withStore(path.join(root, 'other.duckdb'), async (s) => {
      // (what each program says is its own: xz "Unexpected end of input", zstd "premature end")
      for (const [file, program, why] of [[xz, 'xz', /\(.*[Uu]nexpected end of input.*\)/], [zst, 'zstd', /\(.*(premature end|truncated).*\)/]] as const) {
        await assert.rejects(s.import([file]), (err: Error) => {
          assert.ok(err instanceof ImportError && err.file === file, err.message);
          assert.match(err.reason, new RegExp(`^not a readable ${program} file \\(`));
          assert.match(err.reason, why);
          assert.ok(err.reason.includes(`check it with: ${program} -t ${shQuote(file)}; what it holds up to the damage can be written out with: ${program} -dc ${shQuote(file)} > ${shQuote(file.replace(/\.(xz|zst)$/, ''))}`), err.reason);
          return true;
        });
      }
      assert.equal((await s.counts()).rollouts, 0);
      // Without the program, the error says what to install.
      const was = process.env.PATH;
      process.env.PATH = path.join(root, 'no-programs-here');
      try {
        await assert.rejects(s.import([zst]), (err: Error) => {
          assert.ok(err instanceof ImportError && err.file === zst, err.message);
          assert.equal(err.reason, 'reading a zstd file needs the zstd program, which is not on PATH: install it (apt-get install zstd), or decompress the file where it is installed and import the result');
          return true;
        });
      } finally {
        process.env.PATH = was;
      }
    });
    // The command line: the file's own error, and no advice about records.
    const cli = spawnSync(process.execPath, [bin, 'import', traj, '--store', path.join(root, 'cli.duckdb')], { encoding: 'utf8' });
    assert.equal(cli.status, 1);
    assert.match(cli.stderr, /not a readable gzip file \(unexpected end of file\)/);
    assert.match(cli.stderr, /Nothing was imported: the store is as it was before this import\./);
    assert.doesNotMatch(cli.stderr, /--on-error/);
  });

  it('a compressed trajectory is held to the document limit by its uncompressed size, whatever its gzip trailer says (zstd: as its program writes it)', async () => {
    const root = tempDir('evotrainer-gz-size-');
    const dir = path.join(root, 'trajs');
    mkdirSync(dir);
    // 3 MiB of observation that compresses to a few KiB.
    const text = JSON.stringify({ instance_id: 'big__repo-1', messages: [{ role: 'system', content: 'You fix bugs.' }, { role: 'user', content: 'Fix it.' }, { role: 'user', content: 'x'.repeat(3 * 1024 * 1024) }] });
    const honest = path.join(dir, 'big__repo-1.traj.json.gz');
    writeFileSync(honest, gzipSync(text));
    // Two gzip members: the trailer is the last one's, 1 byte.
    const lying = path.join(dir, 'big__repo-2.traj.json.gz');
    writeFileSync(lying, Buffer.concat([gzipSync(text.slice(0, -1).replace('big__repo-1', 'big__repo-2')), gzipSync('}')]));
    copyFileSync(path.join(externalDir, 'mini-swe-agent-v2', 'astropy__astropy-12907.traj.json'), path.join(dir, 'astropy__astropy-12907.traj.json'));
    await withStore(path.join(root, 's.duckdb'), async (s) => {
      await assert.rejects(s.import([dir], { maxDocumentBytes: 1024 * 1024 }), (err: Error) => {
        assert.ok(err instanceof ImportError && err.file === honest, err.message);
        assert.match(err.reason, /^3\.00 MiB \(3145\d{3} bytes\) uncompressed, over the 1 MiB limit on a file read whole/);
        assert.match(err.reason, /--max-document-size 5M/);
        return true;
      });
      const r = await s.import([dir], { maxDocumentBytes: 1024 * 1024, onError: 'skip' });
      assert.deepEqual([r.rollouts, r.badRecords], [1, 2]);
      assert.match(r.files.find((f) => f.file === lying)!.setAside!, /^over 1 MiB uncompressed, over the 1 MiB limit on a file read whole/);
      // Under a limit that holds them, both import.
      const more = await s.import([dir], { maxDocumentBytes: 8 * 1024 * 1024 });
      assert.deepEqual([more.rollouts, more.badRecords], [2, 0]);
    });
    // A zstd file: its program's output is stopped at the limit.
    const zdir = path.join(root, 'zst');
    mkdirSync(zdir);
    const big = path.join(zdir, 'big__repo-3.traj.json');
    writeFileSync(big, text.replace('big__repo-1', 'big__repo-3'));
    const zst = compress(big, CODECS[1]);
    await withStore(path.join(root, 'z.duckdb'), async (s) => {
      await assert.rejects(s.import([zdir], { maxDocumentBytes: 1024 * 1024 }), (err: Error) => {
        assert.ok(err instanceof ImportError && err.file === zst, err.message);
        assert.match(err.reason, /^over 1 MiB uncompressed, over the 1 MiB limit on a file read whole/);
        return true;
      });
      assert.equal((await s.import([zdir], { maxDocumentBytes: 8 * 1024 * 1024 })).rollouts, 1);
    });
  });
});
