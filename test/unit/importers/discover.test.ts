import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { shQuote } from '../../../src/core/jobs/quote';
import { discover } from '../../../src/core/store/importers';
import { externalDir, requireSharedData } from '../../helpers/data';
import { tempDir } from '../../helpers/tmp';

requireSharedData();

describe('discovering the files of a dump folder', () => {
  it('names every file it skips with the reason', async () => {
    const { files, ignored } = await discover([path.join(externalDir, 'swe-agent'), path.join(externalDir, 'verifiers', 'wordle')]);
    assert.equal(files.length, 22);
    assert.deepEqual(ignored.map((f) => [path.relative(externalDir, f.file), f.reason]), [
      ['swe-agent/demos/trajectories_demonstrations/function_calling_simple.traj', 'not in a known dump format (mini-swe-agent, swe-agent, rllm, trl, skyrl, prime-rl, verifiers, verl); pass --format to read it as one'],
      ['swe-agent/testdata/all_preds.jsonl', 'JSONL in no known layout: import it with --format jsonl --map prompt=FIELD,… (or --format FORMAT)'],
      ['verifiers/wordle/metadata.json', 'vf-eval metadata: read with the results.jsonl beside it'],
    ]);
  });

  it('--format on a folder reads every file of that kind whatever the layout, not the verdicts or metadata beside them', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'out'));
    copyFileSync(path.join(externalDir, 'verifiers', 'math_python', 'results.jsonl'), path.join(dir, 'out', 'rollouts-a.jsonl'));
    copyFileSync(path.join(externalDir, 'verifiers', 'math_python', 'metadata.json'), path.join(dir, 'out', 'metadata.json'));
    copyFileSync(path.join(externalDir, 'mini-swe-agent-v2', 'astropy__astropy-12907.traj.json'), path.join(dir, 'out', 'astropy__astropy-12907.traj.json'));
    writeFileSync(path.join(dir, 'out', 'model.run1.json'), JSON.stringify({ resolved_ids: [], unresolved_ids: ['astropy__astropy-12907'] }));
    // prime-rl's own layout is rollouts/step_N/…: outside it, detection does not take the file.
    assert.deepEqual((await discover([dir])).files.map((f) => [path.basename(f.file), f.importer.format]), [
      ['astropy__astropy-12907.traj.json', 'mini-swe-agent'],
      ['rollouts-a.jsonl', 'verifiers'],
    ]);
    const forced = await discover([dir], 'prime-rl');
    assert.deepEqual(forced.files.map((f) => [path.basename(f.file), f.importer.format]), [['rollouts-a.jsonl', 'prime-rl']]);
    assert.deepEqual(forced.ignored.map((f) => [path.basename(f.file), f.reason]), [
      ['astropy__astropy-12907.traj.json', '--format prime-rl reads *.jsonl files'],
      ['metadata.json', 'vf-eval metadata: read with the results.jsonl beside it'],
      ['model.run1.json', 'a SWE-bench run summary: read for the verdicts of the trajectories beside it'],
    ]);
  });

  it('reads a first line longer than its head to its end; past 16 MB, says so', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'rollout_data'));
    // verl writes the score after the response: 200 KB of it pushes "score" past the first 64 KB.
    writeFileSync(path.join(dir, 'rollout_data', '1.jsonl'), JSON.stringify({ input: 'q', output: 'x'.repeat(200_000), gts: '1', score: 1, step: 1 }) + '\n');
    writeFileSync(path.join(dir, 'rollout_data', '2.jsonl'), JSON.stringify({ input: 'q', output: 'x'.repeat(17 << 20), gts: '1', score: 1, step: 2 }) + '\n');
    const { files, ignored } = await discover([dir]);
    assert.deepEqual(files.map((f) => [path.basename(f.file), f.importer.format]), [['1.jsonl', 'verl']]);
    assert.deepEqual(ignored.map((f) => [path.basename(f.file), f.reason]), [['2.jsonl', 'its first line is over 16 MB, more than its layout is recognized by: import it with --format FORMAT']]);
    assert.deepEqual((await discover([dir], 'verl')).files.map((f) => path.basename(f.file)), ['1.jsonl', '2.jsonl']);
  });

  it('reads compressed dumps by their uncompressed name (gzip, zstd, bzip2, xz); names a compressed Parquet file with the command that decompresses it, in a folder and given alone', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'rollout_data'));
    const line = (step: number) => `${JSON.stringify({ input: 'q', output: 'a', score: 1, step })}\n`;
    // Each compressed by its own program, as a user would.
    for (const [n, program] of [[1, 'gzip'], [2, 'zstd'], [3, 'bzip2'], [4, 'xz']] as const) {
      const f = path.join(dir, 'rollout_data', `${n}.jsonl`);
      writeFileSync(f, line(n));
      assert.equal(spawnSync(program, program === 'zstd' ? ['-q', '--rm', f] : [f]).status, 0, program);
    }
    writeFileSync(path.join(dir, 'rollout_data', "5 it's.jsonl.gz"), 'not gzip');
    writeFileSync(path.join(dir, 'rollout_data', '6.jsonl.zst'), 'not zstd');
    writeFileSync(path.join(dir, 'rollout_data', 'notes.txt.gz'), 'not a dump');
    mkdirSync(path.join(dir, 'trl'));
    writeFileSync(path.join(dir, 'trl', 'completions_1.parquet.gz'), 'not read');
    const { files, ignored } = await discover([dir]);
    assert.deepEqual(files.map((f) => [path.basename(f.file), f.importer.format]), [['1.jsonl.gz', 'verl'], ['2.jsonl.zst', 'verl'], ['3.jsonl.bz2', 'verl'], ['4.jsonl.xz', 'verl']]);
    const badGz = path.join(dir, 'rollout_data', "5 it's.jsonl.gz");
    const badZst = path.join(dir, 'rollout_data', '6.jsonl.zst');
    const parquet = path.join(dir, 'trl', 'completions_1.parquet.gz');
    assert.deepEqual(ignored.map((f) => [path.basename(f.file), f.reason]), [
      ['completions_1.parquet.gz', `compressed (.gz): Parquet is read uncompressed (it compresses its own columns); decompress it first (gunzip -k ${parquet})`],
      ["5 it's.jsonl.gz", `not a readable gzip file (incorrect header check); check it with: gzip -t ${shQuote(badGz)}; what it holds up to the damage can be written out with: gzip -dc ${shQuote(badGz)} > ${shQuote(badGz.slice(0, -3))} (then import that)`],
      ['6.jsonl.zst', `not a readable zstd file (${badZst}: unsupported format); check it with: zstd -t ${badZst}; what it holds up to the damage can be written out with: zstd -dc ${badZst} > ${badZst.slice(0, -4)} (then import that)`],
    ]);
    for (const f of [parquet, badGz, badZst]) await assert.rejects(discover([f]), (e: Error) => e.message === `${f}: ${ignored.find((i) => i.file === f)!.reason}`);
    // Archives are listed with the command that extracts each; other files stay unlisted.
    const archives = path.join(dir, 'archives');
    mkdirSync(archives);
    for (const n of ['trajs.zip', "run 1's.tar.gz", 'eval.tgz', 'README.md']) writeFileSync(path.join(archives, n), 'not read');
    const listed = (await discover([archives])).ignored;
    const zip = path.join(archives, 'trajs.zip');
    const tgz = path.join(archives, "run 1's.tar.gz");
    assert.deepEqual(listed.map((f) => [path.basename(f.file), f.reason]), [
      ['eval.tgz', `an archive: import reads the files in it once extracted (mkdir -p ${path.join(archives, 'eval')} && tar -xf ${path.join(archives, 'eval.tgz')} -C ${path.join(archives, 'eval')}), then import that folder`],
      [path.basename(tgz), `an archive: import reads the files in it once extracted (mkdir -p ${shQuote(tgz.slice(0, -7))} && tar -xf ${shQuote(tgz)} -C ${shQuote(tgz.slice(0, -7))}), then import that folder`],
      ['trajs.zip', `an archive: import reads the files in it once extracted (python3 -m zipfile -e ${zip} ${path.join(archives, 'trajs')}), then import that folder`],
    ]);
    await assert.rejects(discover([zip]), (e: Error) => e.message === `${zip}: ${listed[2]!.reason}`);
    // --format takes a compressed .jsonl as a .jsonl.
    assert.deepEqual((await discover([path.join(dir, 'rollout_data')], 'jsonl')).files.map((f) => path.basename(f.file)), ['1.jsonl.gz', '2.jsonl.zst', '3.jsonl.bz2', '4.jsonl.xz']);
  });
});
