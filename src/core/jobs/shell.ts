import { spawn } from 'node:child_process';
import { lstatSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { NamedProfile } from './profile';

/** What a command returned: bytes (log chunks and archives are binary), and text views. */
export interface ShellResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

export interface ExecOptions {
  input?: string | Buffer;
  timeoutMs?: number;
}

/**
 * Where job commands run: this machine (`sh -c`) or a host over the user's OpenSSH. Every
 * command is one string built with `shQuote`; the profile's setup lines run first.
 */
export interface Shell {
  readonly kind: 'local' | 'ssh';
  exec(command: string, opts?: ExecOptions): Promise<ShellResult>;
  /** argv for tools that take a remote-shell program (rsync -e, GIT_SSH_COMMAND); null for local. */
  sshArgv(): string[] | null;
  /** "host:" prefix for rsync/git paths; "" for local. */
  readonly target: string;
  stats: ShellStats;
}

export interface ShellStats {
  /** Processes started (ssh clients, or sh here). */
  processes: number;
  /** Commands by their first word, e.g. squeue: 12. */
  commands: Record<string, number>;
}

export type SshFailure = 'unknown-host-key' | 'changed-host-key' | 'needs-login' | 'unreachable' | 'ssh';

/** ssh itself failed (exit 255): the command did not run. */
export class SshError extends Error {
  constructor(
    readonly failure: SshFailure,
    readonly host: string,
    message: string,
    readonly stderr: string,
  ) {
    super(message);
  }
}

function collect(child: ReturnType<typeof spawn>, input: string | Buffer | undefined, timeoutMs: number | undefined): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    child.stdout!.on('data', (b: Buffer) => out.push(b));
    child.stderr!.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1), stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') });
    });
    if (timeoutMs) {
      timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      timer.unref();
    }
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(input ?? '');
  });
}

function countCommand(stats: ShellStats, command: string): void {
  const word = /^\s*(?:[A-Z_]+=\S*\s+)*([A-Za-z0-9_.-]+)/.exec(command.replace(/^.*\n(?=[^\n]*$)/s, ''))?.[1] ?? 'sh';
  stats.commands[word] = (stats.commands[word] ?? 0) + 1;
}

function withSetup(profile: NamedProfile, command: string): string {
  const setup = (profile.setup ?? []).filter((l) => l.trim());
  return setup.length ? `${setup.join('\n')}\n${command}` : command;
}

export class LocalShell implements Shell {
  readonly kind = 'local' as const;
  readonly target = '';
  stats: ShellStats = { processes: 0, commands: {} };
  constructor(private readonly profile: NamedProfile) {}

  async exec(command: string, opts: ExecOptions = {}): Promise<ShellResult> {
    this.stats.processes++;
    countCommand(this.stats, command);
    const child = spawn('sh', ['-c', withSetup(this.profile, command)], { stdio: ['pipe', 'pipe', 'pipe'], cwd: os.homedir() });
    return collect(child, opts.input, opts.timeoutMs);
  }

  sshArgv(): null {
    return null;
  }
}

/**
 * The private directory of the control sockets: owned by us, mode 0700, not a link; one
 * per user, so a restarted CLI or editor reuses a live connection (and a login done in a
 * terminal).
 */
export function controlDir(): string {
  const base = process.env.EVOTRAINER_SSH_CONTROL_DIR ?? path.join(process.env.XDG_RUNTIME_DIR ?? os.tmpdir(), `evotrainer-ssh-${os.userInfo().uid}`);
  mkdirSync(base, { recursive: true, mode: 0o700 });
  const st = lstatSync(base);
  const uid = os.userInfo().uid;
  if (!st.isDirectory() || st.isSymbolicLink() || (uid >= 0 && st.uid !== uid) || (st.mode & 0o077) !== 0) {
    throw new Error(`${base} must be a directory owned by you with mode 0700 (it holds the ssh control sockets); remove it or set EVOTRAINER_SSH_CONTROL_DIR`);
  }
  return base;
}

function classify(host: string, stderr: string): SshError {
  const s = stderr.trim();
  const first = s.split('\n').filter(Boolean).slice(-3).join(' / ');
  if (/REMOTE HOST IDENTIFICATION HAS CHANGED|Host key for .* has changed/i.test(s)) {
    return new SshError('changed-host-key', host, `The host key of ${host} has CHANGED since it was recorded in known_hosts: possibly an attack, or a reinstalled host. Check with the cluster admins, then fix known_hosts (ssh-keygen -R ${host}). Nothing was run.`, s);
  }
  if (/Host key verification failed|No .* host key is known|host key is not known/i.test(s)) {
    return new SshError('unknown-host-key', host, `The host key of ${host} is not known (not in known_hosts), so EvoTrainer will not connect. Run \`ssh ${host}\` once in a terminal, check the fingerprint with the cluster admins, accept it, then retry.`, s);
  }
  if (/Permission denied|Authentication failed|keyboard-interactive|password/i.test(s)) {
    return new SshError('needs-login', host, `Cannot log in to ${host} without a person (${first}). Log in once in a terminal with \`evotrainer job login\` (or the editor's "Log In to Cluster"), which opens the shared connection, then retry.`, s);
  }
  if (/Connection refused|Connection timed out|No route to host|Could not resolve hostname|Connection closed|Connection reset|Broken pipe|kex_exchange|Network is unreachable/i.test(s)) {
    return new SshError('unreachable', host, `${host} is unreachable: ${first}`, s);
  }
  return new SshError('ssh', host, `ssh to ${host} failed: ${first || 'exit 255'}`, s);
}

export class SshTransport implements Shell {
  readonly kind = 'ssh' as const;
  readonly target: string;
  stats: ShellStats = { processes: 0, commands: {} };
  readonly host: string;

  constructor(
    private readonly profile: NamedProfile,
    private readonly opts: { controlDir?: string; persistSeconds?: number; multiplex?: boolean } = {},
  ) {
    if (!profile.host) throw new Error(`profile "${profile.name}" has no host`);
    this.host = profile.host;
    this.target = `${profile.host}:`;
  }

  /** The options of every call: the user's config (or the profile's), batch mode, a strict host-key check, the shared connection. */
  options(batch = true): string[] {
    const o: string[] = [];
    if (this.profile.ssh_config) o.push('-F', this.profile.ssh_config);
    if (batch) o.push('-o', 'BatchMode=yes');
    o.push('-o', 'StrictHostKeyChecking=yes', '-o', 'ConnectTimeout=15', '-o', 'ServerAliveInterval=15', '-o', 'ServerAliveCountMax=2');
    if (this.opts.multiplex !== false) {
      const dir = this.opts.controlDir ?? controlDir();
      o.push('-o', 'ControlMaster=auto', '-o', `ControlPath=${path.join(dir, '%C')}`, '-o', `ControlPersist=${this.opts.persistSeconds ?? 600}`);
    }
    return o;
  }

  sshArgv(): string[] {
    return ['ssh', ...this.options()];
  }

  /**
   * The command a terminal runs for a login that needs a person (password, OTP): it opens
   * the shared connection and leaves it up, so batch calls reuse it.
   */
  loginArgv(): string[] {
    // Runs `true` as the master: ControlPersist then keeps the connection in the background
    // after the terminal closes (a `-N -f` master dies with its terminal).
    return ['ssh', ...this.options(false).map((x) => (x === 'ControlMaster=auto' ? 'ControlMaster=yes' : x)), this.host, '--', 'true'];
  }

  async exec(command: string, opts: ExecOptions = {}): Promise<ShellResult> {
    this.stats.processes++;
    countCommand(this.stats, command);
    const child = spawn('ssh', [...this.options(), this.host, '--', withSetup(this.profile, command)], { stdio: ['pipe', 'pipe', 'pipe'] });
    const r = await collect(child, opts.input, opts.timeoutMs);
    if (r.code === 255) throw classify(this.host, r.stderr);
    return r;
  }

  /** Closes the shared connection (ssh -O exit). */
  async close(): Promise<void> {
    if (this.opts.multiplex === false) return;
    const child = spawn('ssh', [...this.options(), '-O', 'exit', this.host], { stdio: ['pipe', 'pipe', 'pipe'] });
    await collect(child, undefined, 10_000).catch(() => undefined);
  }
}

/** argv of the terminal login for a profile that needs a person (password, OTP); see SshTransport.loginArgv. */
export function loginArgv(profile: NamedProfile): string[] {
  return new SshTransport(profile).loginArgv();
}

export function shellFor(profile: NamedProfile, opts: { controlDir?: string; multiplex?: boolean } = {}): Shell {
  return profile.kind === 'local' ? new LocalShell(profile) : new SshTransport(profile, opts);
}

/** Text of a result, for messages. */
export function text(r: ShellResult): string {
  return r.stdout.toString('utf8');
}
