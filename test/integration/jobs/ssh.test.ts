import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { JobRecords, shJoin, shPath, SshError, SshTransport, submitJob, waitForJob, type LogChunk } from '../../../src/core/jobs';
import { seededRandom } from '../../../src/core/util/random';
import { asJobUser, clusterProfile, makeHarness, startCluster, type ClusterInfo } from '../../helpers/cluster';
import { tempDir } from '../../helpers/tmp';

// Real OpenSSH (client and sshd on 127.0.0.1) and a real remote shell (bash, the job
// user's login shell); Slurm where a test says so.
const PIECES = [' ', "'", '"', '$(id)', '`id`', ';', '\n', '\\', '$HOME', '*', '~', '&&', '|', '>', '<', '\t', '!', '#', '%', '{a,b}', 'é', '日本語', '🙂', '-rf', '--', '=', '..', '/', 'a', 'Z', '0', '$', '(', ')', '&'];
function draw(rand: () => number): string {
  let s = '';
  const n = 1 + Math.floor(rand() * 8);
  for (let i = 0; i < n; i++) s += PIECES[Math.floor(rand() * PIECES.length)]!;
  return s;
}

function listening(c: ClusterInfo): number {
  return Number(readFileSync(c.sshdPidFile, 'utf8').trim());
}

/** sshd's listener and every connection process under it, by pid. */
function sshdTree(root: number): number[] {
  const kids = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      kids.set(ppid, [...(kids.get(ppid) ?? []), Number(d)]);
    } catch {
      /* exited */
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    out.push(p);
    for (const k of kids.get(p) ?? []) walk(k);
  };
  walk(root);
  return out;
}

describe('ssh transport and quoting on a real sshd', () => {
  const dir = tempDir('evotrainer-jobs-ssh-');
  let c: ClusterInfo;
  before(() => {
    c = startCluster();
  });

  it('round-trips 400 seeded arguments with spaces, quotes, $(), backticks, ;, newlines and unicode through ssh and the remote shell byte for byte', async () => {
    const ssh = new SshTransport(clusterProfile(c, 'ssh'), { controlDir: mkdirP(path.join(dir, 'ctl1')) });
    const rand = seededRandom(7);
    const cases = Array.from({ length: 400 }, () => draw(rand));
    for (let i = 0; i < cases.length; i += 20) {
      const batch = cases.slice(i, i + 20);
      const r = await ssh.exec(shJoin(['printf', '%s\\0', ...batch]));
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(r.stdout, Buffer.from(batch.map((s) => `${s}\0`).join('')), `batch at ${i}`);
    }
    // Paths: files created and read back under the remote home with such names.
    const names = cases.slice(0, 40).map((s, i) => `q${i}-${s.replace(/\//g, '_')}`);
    const base = '~/work/quoting dir $(x) `y`';
    const make = names.map((n) => `mkdir -p ${shPath(`${base}/${n}`)} && printf %s ${shJoin([n])} > ${shPath(`${base}/${n}/${n}`)}`).join(' && ');
    assert.equal((await ssh.exec(make)).code, 0);
    const read = await ssh.exec(names.map((n) => `cat ${shPath(`${base}/${n}/${n}`)} && printf '\\0'`).join(' && '));
    assert.equal(read.stdout.toString('utf8'), names.map((n) => `${n}\0`).join(''));
    // The remote side saw the names themselves: no `x` or `y` command ran, no stray files.
    const listed = asJobUser(c, `cd ~/work/'quoting dir $(x) \`y\`' && find . -mindepth 1 -maxdepth 1 -printf x | wc -c`).trim();
    assert.equal(Number(listed), names.length);
    await ssh.close();
  });

  it('refuses an unknown host key with a clear error and records nothing', async () => {
    const cfg = path.join(dir, 'ssh_config_unknown');
    const known = path.join(dir, 'known_hosts_empty');
    writeFileSync(known, '');
    writeFileSync(cfg, readFileSync(c.sshConfig, 'utf8').replace(/UserKnownHostsFile .*/, `UserKnownHostsFile ${known}`).replace(/StrictHostKeyChecking .*/, 'StrictHostKeyChecking accept-new'));
    const ssh = new SshTransport({ ...clusterProfile(c, 'ssh'), ssh_config: cfg }, { controlDir: mkdirP(path.join(dir, 'ctl2')) });
    await assert.rejects(ssh.exec('echo hi'), (e: unknown) => {
      assert.ok(e instanceof SshError);
      assert.equal(e.failure, 'unknown-host-key');
      assert.match(e.message, /host key of evocluster is not known .* Run `ssh evocluster` once in a terminal, check the fingerprint/);
      return true;
    });
    assert.equal(readFileSync(known, 'utf8'), '', 'the key was not accepted silently');
  });

  it('runs a detached job on the ssh executor from a work directory with metacharacters, and stops it at its time limit', async () => {
    const records = new JobRecords(path.join(dir, 'records'));
    const harness = makeHarness(path.join(dir, 'harness'), { 'evotrainer.yaml': "name: t\ndomain: math\njobs:\n  train:\n    command: echo \"train {{version}} in $PWD\"; echo \"$GREETING\"\n    env:\n      GREETING: \"hello 'there' $(nope) {{run}}\"\n  eval:\n    command: echo begin; sleep 30\n    timeout_minutes: 0.05\n" });
    const profile = clusterProfile(c, 'ssh', { work_dir: "~/work/odd dir $(touch pwned) 'q'; x" });
    const job = await submitJob({ profile, records, harness: harness.dir, templateName: 'train', version: 'v2 "q"', run: 'r`id`' });
    const chunks: LogChunk[] = [];
    const done = await waitForJob(job.id, { records, onLog: (l) => chunks.push(l) });
    assert.equal(done.state, 'completed', JSON.stringify(done.failure));
    assert.equal(chunks.map((l) => l.text).join(''), `train v2 "q" in ${c.home}/work/odd dir $(touch pwned) 'q'; x/trees/${harness.commit}\nhello 'there' $(nope) r\`id\`\n`);
    assert.equal(asJobUser(c, 'find ~ -name pwned | wc -l').trim(), '0', 'no $() in a path ever ran');

    const slow = await submitJob({ profile, records, harness: harness.dir, templateName: 'eval' });
    const t = await waitForJob(slow.id, { records });
    assert.equal(t.state, 'timeout');
    assert.match(t.failure!.logTail, /begin/);
    assert.match(t.failure!.nextStep, /timeout_minutes/);
  });

  it('reports a job whose runner vanished (killed without an exit) as lost, with where to look', async () => {
    const records = new JobRecords(path.join(dir, 'records-lost'));
    const profile = clusterProfile(c, 'ssh');
    const job = await submitJob({ profile, records, script: '#!/bin/bash\necho up\nsleep 30\n' });
    let killed = false;
    const done = await waitForJob(job.id, {
      records,
      onLog: () => {
        if (killed) return;
        killed = true;
        asJobUser(c, `kill -KILL -- -${job.remoteId}`);
      },
    });
    assert.equal(done.state, 'lost');
    assert.match(done.failure!.message, /vanished/);
    assert.ok(done.failure!.nextStep.includes(done.jobDir!), done.failure!.nextStep);
  });

  it('holds a submit until the profile is under its concurrency limit', async () => {
    const records = new JobRecords(path.join(dir, 'records-limit'));
    const profile = clusterProfile(c, 'ssh', { concurrency: 1 });
    const first = await submitJob({ profile, records, script: '#!/bin/bash\nsleep 2\n' });
    const second = await submitJob({ profile, records, script: '#!/bin/bash\ntrue\n' });
    const a = records.require(first.id);
    assert.equal(a.state, 'completed', 'the second submit waited for the first to end');
    const b = await waitForJob(second.id, { records });
    assert.ok(Date.parse(b.startedAt!) >= Date.parse(a.endedAt!), `${b.startedAt} >= ${a.endedAt}`);
  });

  it('keeps a Slurm job running when sshd is killed mid-job, and reattaches when sshd is back', async () => {
    // A second sshd of its own (same host key and user, another port), so killing it
    // disturbs no other test.
    const own = await ownSshd(c, path.join(dir, 'own-sshd'));
    after(() => {
      try {
        process.kill(listening(own), 'SIGTERM');
      } catch {
        /* already gone */
      }
    });
    const records = new JobRecords(path.join(dir, 'records-kill'));
    const profile = clusterProfile(c, 'slurm', { ssh_config: own.sshConfig });
    const job = await submitJob({ profile, records, script: '#!/bin/bash\nfor i in 1 2 3 4 5 6 7 8; do echo "tick $i"; sleep 0.5; done\n' });
    const chunks: string[] = [];
    const offline: string[] = [];
    let killed = false;
    let restarted: Promise<void> | null = null;
    const done = await waitForJob(job.id, {
      records,
      onOffline: (e) => offline.push(e.message),
      onLog: (l) => {
        chunks.push(l.text);
        if (!killed && l.text.includes('tick 1')) {
          killed = true;
          for (const pid of sshdTree(listening(own)).reverse()) {
            try {
              process.kill(pid, 'SIGKILL');
            } catch {
              /* gone */
            }
          }
          restarted = new Promise((res) =>
            setTimeout(() => {
              execFileSync('/usr/sbin/sshd', ['-f', own.sshdConfig, '-E', own.sshdLog]);
              res();
            }, 2000),
          );
        }
      },
    });
    await restarted;
    assert.ok(killed);
    assert.ok(offline.length >= 1, 'polls failed while sshd was down');
    assert.match(offline[0]!, /unreachable/);
    assert.equal(done.state, 'completed');
    assert.equal(chunks.join(''), [1, 2, 3, 4, 5, 6, 7, 8].map((i) => `tick ${i}\n`).join(''), 'the log resumed where it was: nothing lost, nothing twice');
    assert.equal(spawnSync('kill', ['-0', String(listening(own))]).status, 0, 'sshd runs again');
  });
});

async function ownSshd(c: ClusterInfo, d: string): Promise<ClusterInfo> {
  mkdirSync(d, { recursive: true, mode: 0o700 });
  const port = await new Promise<number>((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(p));
    });
  });
  const own = { ...c, sshPort: port, sshdConfig: path.join(d, 'sshd_config'), sshdPidFile: path.join(d, 'sshd.pid'), sshdLog: path.join(d, 'sshd.log'), sshConfig: path.join(d, 'config'), knownHosts: path.join(d, 'known_hosts') };
  writeFileSync(own.sshdConfig, readFileSync(c.sshdConfig, 'utf8').replace(/^Port .*/m, `Port ${port}`).replace(/^PidFile .*/m, `PidFile ${own.sshdPidFile}`));
  writeFileSync(own.knownHosts, readFileSync(c.knownHosts, 'utf8').replace(/\]:\d+/, `]:${port}`));
  writeFileSync(own.sshConfig, readFileSync(c.sshConfig, 'utf8').replace(/Port .*/, `Port ${port}`).replace(/UserKnownHostsFile .*/, `UserKnownHostsFile ${own.knownHosts}`));
  execFileSync('/usr/sbin/sshd', ['-f', own.sshdConfig, '-E', own.sshdLog]);
  for (let i = 0; i < 50; i++) {
    try {
      listening(own);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return own;
}

function mkdirP(d: string): string {
  mkdirSync(d, { recursive: true, mode: 0o700 });
  return d;
}
