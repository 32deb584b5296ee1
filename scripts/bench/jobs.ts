// `npm run bench:jobs`: N concurrent Slurm jobs (default 50) followed for about a minute on
// the real test cluster (sshd on 127.0.0.1 + one-node Slurm, started by
// scripts/cluster-setup.mjs, as root), all over one multiplexed ssh connection. Prints the
// ssh processes started, the squeue calls against the polls (at most one per interval), and
// the per-command overhead on the shared connection as a ratio to a fresh `ssh` per command,
// both measured in this run.
//   --jobs N        concurrent jobs (default 50)
//   --seconds S     how long each job runs, printing a line a second (default 60)
//   --poll S        poll interval in seconds (default 2)
//   --commands N    commands timed on each connection kind (default 30)
//   --json          end with one JSON line of the results
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { JobRecords, monitorPolls, shellOf, SshTransport, submitJob, waitForJob, type NamedProfile } from '../../src/core/jobs';
import { arg as opt, args, root } from './common';
import { recordBench, watchLoad } from './results';

const N = Number(opt('jobs', '50'));
const SECONDS = Number(opt('seconds', '60'));
const POLL = Number(opt('poll', '2'));
const COMMANDS = Number(opt('commands', '30'));
const load = watchLoad();
const json = args.includes('--json');
if (![N, SECONDS, POLL, COMMANDS].every((x) => Number.isFinite(x) && x > 0)) {
  console.error('--jobs, --seconds, --poll and --commands must be positive numbers');
  process.exit(2);
}

const setup = spawnSync(process.execPath, [path.join(root, 'scripts', 'cluster-setup.mjs'), '--json'], { encoding: 'utf8' });
if (setup.status !== 0) {
  console.error(`the test cluster did not start:\n${setup.stderr}`);
  process.exit(1);
}
const c = JSON.parse(setup.stdout.trim().split('\n').pop()!) as { host: string; sshConfig: string; slurmConf: string };
const ctl = mkdtempSync(path.join(os.tmpdir(), 'evotrainer-bench-jobs-'));
process.env.EVOTRAINER_SSH_CONTROL_DIR = path.join(ctl, 'ctl');
const profile: NamedProfile = { name: 'bench', kind: 'slurm', host: c.host, ssh_config: c.sshConfig, work_dir: `~/work/bench-${process.pid}`, setup: [`export SLURM_CONF=${c.slurmConf}`], poll_seconds: POLL };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timeCommands(multiplex: boolean): Promise<number> {
  const t = new SshTransport(profile, { multiplex, controlDir: path.join(ctl, 'ctl') });
  if (multiplex) await t.exec('true');
  const times: number[] = [];
  for (let i = 0; i < COMMANDS; i++) {
    const t0 = performance.now();
    const r = await t.exec('true');
    if (r.code !== 0) throw new Error(`ssh true: exit ${r.code}`);
    times.push(performance.now() - t0);
  }
  return median(times);
}

async function main(): Promise<void> {
  const records = new JobRecords(path.join(ctl, 'records'));
  const shell = shellOf(profile);
  const t0 = performance.now();
  const script = `#!/bin/bash\nfor i in $(seq 1 ${Math.ceil(SECONDS)}); do echo "line $i"; sleep 1; done\n`;
  const jobs = [];
  for (let i = 0; i < N; i += 10) jobs.push(...(await Promise.all(Array.from({ length: Math.min(10, N - i) }, (_, k) => submitJob({ profile, records, script, key: `bench:${i + k}` })))));
  const submitS = (performance.now() - t0) / 1000;
  const squeue0 = shell.stats.commands.squeue ?? 0;
  const polls0 = monitorPolls();
  const ssh0 = shell.stats.processes;
  const t1 = performance.now();
  let bytes = 0;
  const done = await Promise.all(jobs.map((j) => waitForJob(j.id, { records, pollMs: POLL * 1000, onLog: (l) => (bytes += l.text.length) })));
  const followS = (performance.now() - t1) / 1000;
  const squeues = (shell.stats.commands.squeue ?? 0) - squeue0;
  const polls = monitorPolls() - polls0;
  const sshFollow = shell.stats.processes - ssh0;
  const completed = done.filter((d) => d.state === 'completed').length;
  const intervals = Math.ceil(followS / POLL) + 1;
  console.log(`${N} jobs submitted in ${submitS.toFixed(1)} s (${shell.stats.processes - sshFollow} ssh client processes), followed for ${followS.toFixed(1)} s: ${completed}/${N} completed, ${bytes} log bytes streamed`);
  console.log(`following: ${sshFollow} ssh client processes (one shared connection), ${squeues} squeue calls in ${polls} polls (${intervals} intervals of ${POLL} s): ${(squeues / Math.max(1, polls)).toFixed(2)} squeue per poll`);
  const fresh = await timeCommands(false);
  const mux = await timeCommands(true);
  console.log(`per command: ${mux.toFixed(1)} ms on the multiplexed connection vs ${fresh.toFixed(1)} ms for a fresh ssh: overhead ${(mux / fresh).toFixed(3)}× of a fresh connection (${(fresh / mux).toFixed(1)}× faster)`);
  await new SshTransport(profile, { controlDir: path.join(ctl, 'ctl') }).close();
  rmSync(ctl, { recursive: true, force: true });
  if (squeues > polls || completed !== N) process.exitCode = 1;
  if (json) console.log(JSON.stringify({ jobs: N, completed, submitSeconds: submitS, followSeconds: followS, sshProcesses: sshFollow, squeueCalls: squeues, polls, intervals, muxMs: mux, freshMs: fresh, overheadRatio: mux / fresh }));
  recordBench('jobs', 'npm run bench:jobs', N === 50 && SECONDS === 60 && POLL === 2 && COMMANDS === 30, load.stop(), [
    { figure: `following ${N} concurrent Slurm jobs for ${SECONDS} s: squeue calls per poll`, ours: `${(squeues / Math.max(1, polls)).toFixed(2)} (${squeues} in ${polls} polls), ${sshFollow} ssh processes, ${completed}/${N} completed`, target: '≤ 1 squeue per poll, one shared connection', met: squeues <= polls && completed === N },
    { figure: 'one remote command on the multiplexed connection', ours: `${mux.toFixed(1)} ms`, baseline: `a fresh ssh ${fresh.toFixed(1)} ms`, ratio: `${(mux / fresh).toFixed(3)}× the time` },
  ]);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
