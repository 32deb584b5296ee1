#!/usr/bin/env node
// A real cluster on this machine for the job tests and `npm run bench:jobs`: OpenSSH's sshd on
// 127.0.0.1 (throwaway host key, one authorized key) for a separate local user with its own
// home and work directory, and a one-node Slurm (munged, slurmctld, slurmd) isolated in a
// state directory. Idempotent: services already running are reused. Needs root (it creates
// the user and starts the daemons); installs openssh-server, slurm-wlm, munge and rsync with
// apt-get when they are missing.
//
//   node scripts/cluster-setup.mjs [--json]   start (or reuse) and print the connection facts
//   node scripts/cluster-setup.mjs --stop     stop the daemons by pid
//   node scripts/cluster-setup.mjs --running  exit 0 when any of them runs (names them), 1 when none
//
// State directory: $EVOTRAINER_CLUSTER_DIR or /tmp/evotrainer-cluster.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const dir = path.resolve(process.env.EVOTRAINER_CLUSTER_DIR ?? '/tmp/evotrainer-cluster');
const USER = process.env.EVOTRAINER_CLUSTER_USER ?? 'evojobs';
const HOST_ALIAS = 'evocluster';
const argv = process.argv.slice(2);
const json = argv.includes('--json');
const log = (m) => process.stderr.write(`cluster-setup: ${m}\n`);

function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  if (r.status !== 0) throw new Error(`\`${cmd} ${args.join(' ')}\` failed (exit ${r.status ?? r.signal}): ${(r.stderr || r.stdout || r.error?.message || '').trim()}`);
  return r.stdout;
}
const which = (p) => spawnSync('sh', ['-c', `command -v ${p}`], { encoding: 'utf8' }).status === 0;
const alive = (pidFile) => {
  try {
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    if (!pid) return false;
    process.kill(pid, 0);
    return pid;
  } catch {
    return false;
  }
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Writes only a change, atomically: ssh clients and sshd of running tests read these files. */
function put(file, content) {
  try {
    if (readFileSync(file, 'utf8') === String(content)) return;
  } catch {
    /* new */
  }
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, content);
  renameSync(tmp, file);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const files = {
  state: path.join(dir, 'state.json'),
  lock: path.join(dir, '.lock'),
  hostKey: path.join(dir, 'ssh', 'ssh_host_ed25519_key'),
  clientKey: path.join(dir, 'ssh', 'client_key'),
  knownHosts: path.join(dir, 'ssh', 'known_hosts'),
  sshConfig: path.join(dir, 'ssh', 'config'),
  sshdConfig: path.join(dir, 'ssh', 'sshd_config'),
  sshdPid: path.join(dir, 'ssh', 'sshd.pid'),
  sshdLog: path.join(dir, 'ssh', 'sshd.log'),
  mungeDir: path.join(dir, 'munge'),
  slurmConf: path.join(dir, 'slurm', 'slurm.conf'),
  slurmDir: path.join(dir, 'slurm'),
};
const mungeSocket = path.join(files.mungeDir, 'munge.socket');
const mungePid = path.join(files.mungeDir, 'munged.pid');
const ctldPid = path.join(files.slurmDir, 'slurmctld.pid');
const slurmdPid = path.join(files.slurmDir, 'slurmd.pid');

function stop() {
  for (const f of [slurmdPid, ctldPid, mungePid, files.sshdPid]) {
    const pid = alive(f);
    if (pid) {
      try {
        process.kill(pid, 'SIGTERM');
        log(`stopped pid ${pid} (${path.basename(f, '.pid')})`);
      } catch {
        /* gone already */
      }
    }
  }
}

function ensurePackages() {
  const need = [];
  if (!existsSync('/usr/sbin/sshd')) need.push('openssh-server');
  if (!which('slurmctld') || !which('slurmd') || !which('sbatch')) need.push('slurm-wlm');
  if (!which('munged')) need.push('munge');
  if (!which('rsync')) need.push('rsync');
  if (!which('ssh')) need.push('openssh-client');
  if (!need.length) return;
  log(`installing ${need.join(' ')} (apt-get)`);
  sh('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  sh('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...need], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

function ensureUser() {
  if (spawnSync('id', ['-u', USER]).status !== 0) {
    log(`creating user ${USER}`);
    sh('useradd', ['--create-home', '--shell', '/bin/bash', USER]);
  }
  // No password, but not locked: sshd refuses a locked account even for key logins.
  sh('usermod', ['-p', '*', USER]);
  const home = sh('getent', ['passwd', USER]).split(':')[5];
  const uid = Number(sh('id', ['-u', USER]).trim());
  const gid = Number(sh('id', ['-g', USER]).trim());
  const sshDir = path.join(home, '.ssh');
  mkdirSync(sshDir, { recursive: true, mode: 0o700 });
  mkdirSync(path.join(home, 'work'), { recursive: true });
  chownSync(home, uid, gid);
  chmodSync(home, 0o755);
  chownSync(sshDir, uid, gid);
  chmodSync(sshDir, 0o700);
  chownSync(path.join(home, 'work'), uid, gid);
  const auth = path.join(sshDir, 'authorized_keys');
  put(auth, readFileSync(`${files.clientKey}.pub`, 'utf8'));
  chownSync(auth, uid, gid);
  chmodSync(auth, 0o600);
  return { home, uid, gid, workDir: path.join(home, 'work') };
}

async function startSshd(state) {
  if (alive(files.sshdPid)) return false;
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  state.sshPort = await freePort();
  writeFileSync(
    files.sshdConfig,
    [
      `Port ${state.sshPort}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${files.hostKey}`,
      `PidFile ${files.sshdPid}`,
      'AuthorizedKeysFile .ssh/authorized_keys',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      'UsePAM no',
      `AllowUsers ${USER}`,
      // The multiplexed connection of the benchmark carries many sessions at once.
      'MaxSessions 200',
      'MaxStartups 200:30:400',
      'ClientAliveInterval 0',
      'Subsystem sftp internal-sftp',
      '',
    ].join('\n'),
  );
  sh('/usr/sbin/sshd', ['-f', files.sshdConfig, '-E', files.sshdLog]);
  for (let i = 0; i < 50 && !alive(files.sshdPid); i++) await sleep(100);
  if (!alive(files.sshdPid)) throw new Error(`sshd did not start; see ${files.sshdLog}`);
  return true;
}

async function startSlurm(state) {
  let started = false;
  const munge = Number(sh('id', ['-u', 'munge']).trim());
  const mungeGid = Number(sh('id', ['-g', 'munge']).trim());
  mkdirSync(files.mungeDir, { recursive: true });
  chownSync(files.mungeDir, munge, mungeGid);
  chmodSync(files.mungeDir, 0o755);
  const key = path.join(files.mungeDir, 'munge.key');
  if (!existsSync(key)) {
    writeFileSync(key, execFileSync('head', ['-c', '1024', '/dev/urandom']));
  }
  chownSync(key, munge, mungeGid);
  chmodSync(key, 0o400);
  if (!alive(mungePid)) {
    rmSync(mungeSocket, { force: true });
    sh('runuser', ['-u', 'munge', '--', 'munged', `--key-file=${key}`, `--socket=${mungeSocket}`, `--pid-file=${mungePid}`, `--log-file=${path.join(files.mungeDir, 'munged.log')}`, `--seed-file=${path.join(files.mungeDir, 'munged.seed')}`]);
    for (let i = 0; i < 50 && !existsSync(mungeSocket); i++) await sleep(100);
    started = true;
  }
  const conf = files.slurmConf;
  for (const d of ['state', 'spool', 'log']) mkdirSync(path.join(files.slurmDir, d), { recursive: true });
  if (!alive(ctldPid) || !alive(slurmdPid) || !existsSync(conf)) {
    if (alive(ctldPid)) process.kill(alive(ctldPid), 'SIGTERM');
    if (alive(slurmdPid)) process.kill(alive(slurmdPid), 'SIGTERM');
    await sleep(300);
    state.slurmctldPort = await freePort();
    state.slurmdPort = await freePort();
    const node = os.hostname().split('.')[0];
    const cpus = os.cpus().length;
    const memMb = Math.floor(os.totalmem() / 1024 / 1024 / 2);
    writeFileSync(
      conf,
      [
        'ClusterName=evotest',
        `SlurmctldHost=${node}(127.0.0.1)`,
        'AuthType=auth/munge',
        'CredType=cred/munge',
        `AuthInfo=socket=${mungeSocket}`,
        'SlurmUser=root',
        'SlurmdUser=root',
        `SlurmctldPort=${state.slurmctldPort}`,
        `SlurmdPort=${state.slurmdPort}`,
        `StateSaveLocation=${path.join(files.slurmDir, 'state')}`,
        `SlurmdSpoolDir=${path.join(files.slurmDir, 'spool')}`,
        `SlurmctldPidFile=${ctldPid}`,
        `SlurmdPidFile=${slurmdPid}`,
        `SlurmctldLogFile=${path.join(files.slurmDir, 'log', 'slurmctld.log')}`,
        `SlurmdLogFile=${path.join(files.slurmDir, 'log', 'slurmd.log')}`,
        'ProctrackType=proctrack/linuxproc',
        'TaskPlugin=task/none',
        'SelectType=select/cons_tres',
        'SelectTypeParameters=CR_Core',
        'SchedulerType=sched/builtin',
        'MpiDefault=none',
        'ReturnToService=2',
        'JobAcctGatherType=jobacct_gather/none',
        'AccountingStorageType=accounting_storage/none',
        'JobCompType=jobcomp/none',
        // Finished jobs stay visible to `scontrol show job` for this long (no slurmdbd here).
        'MinJobAge=600',
        'MaxJobCount=20000',
        'KillWait=2',
        'InactiveLimit=0',
        'Waittime=0',
        'SlurmctldTimeout=30',
        'SlurmdTimeout=60',
        'MessageTimeout=20',
        'SlurmctldDebug=info',
        'SlurmdDebug=info',
        `NodeName=${node} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${memMb} State=UNKNOWN`,
        `PartitionName=debug Nodes=${node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:50`,
        '',
      ].join('\n'),
    );
    chmodSync(conf, 0o644);
    rmSync(path.join(files.slurmDir, 'state'), { recursive: true, force: true });
    mkdirSync(path.join(files.slurmDir, 'state'), { recursive: true });
    sh('slurmctld', ['-f', conf, '-i']);
    sh('slurmd', ['-f', conf]);
    started = true;
  }
  const env = { ...process.env, SLURM_CONF: conf };
  for (let i = 0; i < 100; i++) {
    const r = spawnSync('sinfo', ['-h', '-o', '%T'], { encoding: 'utf8', env });
    if (r.status === 0 && /idle|mix|alloc/.test(r.stdout)) return started;
    if (r.status === 0 && /down|drain/.test(r.stdout) && i % 10 === 5) spawnSync('scontrol', ['update', `nodename=${os.hostname().split('.')[0]}`, 'state=resume'], { env });
    await sleep(200);
  }
  throw new Error(`Slurm did not come up; see ${path.join(files.slurmDir, 'log')}`);
}

async function lock() {
  for (let i = 0; i < 600; i++) {
    try {
      mkdirSync(files.lock);
      return () => rmSync(files.lock, { recursive: true, force: true });
    } catch {
      // A lock left by a setup that died: older than two minutes.
      try {
        if (Date.now() - statSync(files.lock).mtimeMs > 120_000) rmSync(files.lock, { recursive: true, force: true });
      } catch {
        /* raced */
      }
      await sleep(200);
    }
  }
  throw new Error(`${files.lock} is held by another setup`);
}

async function start() {
  if (process.getuid?.() !== 0) throw new Error('run as root: it creates a local user and starts sshd, munged, slurmctld and slurmd');
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  chmodSync(dir, 0o755);
  const release = await lock();
  try {
    ensurePackages();
    mkdirSync(path.join(dir, 'ssh'), { recursive: true, mode: 0o700 });
    chmodSync(path.join(dir, 'ssh'), 0o700);
    if (!existsSync(files.hostKey)) sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'evotrainer-test-host', '-f', files.hostKey]);
    if (!existsSync(files.clientKey)) sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'evotrainer-test-client', '-f', files.clientKey]);
    const user = ensureUser();
    const state = existsSync(files.state) ? JSON.parse(readFileSync(files.state, 'utf8')) : {};
    const sshStarted = await startSshd(state);
    const slurmStarted = await startSlurm(state);
    const hostPub = readFileSync(`${files.hostKey}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
    put(files.knownHosts, `[127.0.0.1]:${state.sshPort} ${hostPub}\n`);
    put(
      files.sshConfig,
      [
        `Host ${HOST_ALIAS}`,
        '  HostName 127.0.0.1',
        `  Port ${state.sshPort}`,
        `  User ${USER}`,
        `  IdentityFile ${files.clientKey}`,
        '  IdentitiesOnly yes',
        `  UserKnownHostsFile ${files.knownHosts}`,
        '  StrictHostKeyChecking yes',
        '  GlobalKnownHostsFile /dev/null',
        '  LogLevel ERROR',
        '',
      ].join('\n'),
    );
    const info = {
      dir,
      host: HOST_ALIAS,
      sshConfig: files.sshConfig,
      knownHosts: files.knownHosts,
      clientKey: files.clientKey,
      sshPort: state.sshPort,
      user: USER,
      home: user.home,
      workDir: user.workDir,
      slurmConf: files.slurmConf,
      sshdPidFile: files.sshdPid,
      sshdConfig: files.sshdConfig,
      sshdLog: files.sshdLog,
      started: sshStarted || slurmStarted,
    };
    put(files.state, JSON.stringify({ ...state, ...info }, null, 2));
    return info;
  } finally {
    release();
  }
}

if (argv.includes('--stop')) {
  stop();
} else if (argv.includes('--running')) {
  const up = [files.sshdPid, mungePid, ctldPid, slurmdPid].filter((f) => alive(f)).map((f) => path.basename(f, '.pid'));
  process.stdout.write(`${up.join(' ')}\n`);
  process.exit(up.length ? 0 : 1);
} else {
  start().then(
    (info) => {
      if (json) process.stdout.write(`${JSON.stringify(info)}\n`);
      else log(`ready: ssh -F ${info.sshConfig} ${info.host} (user ${info.user}, work dir ${info.workDir}); SLURM_CONF=${info.slurmConf}`);
    },
    (err) => {
      process.stderr.write(`cluster-setup: ${err.message}\n`);
      process.exit(1);
    },
  );
}
