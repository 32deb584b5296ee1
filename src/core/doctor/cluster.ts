import { shellOf, SshError, type NamedProfile, type SshFailure } from '../jobs';
import type { DoctorCheck } from './index';

/**
 * The doctor's cluster check: the profile reached over the user's OpenSSH in batch mode,
 * and Slurm's tools there for a slurm profile. Separate from ./index so that loading the
 * doctor (the editor's activation path) does not load the job engine.
 */
const SSH_FIX: Record<SshFailure, string> = {
  'unknown-host-key': 'verify the host key once: run `ssh HOST` in a terminal and check the fingerprint it shows (EvoTrainer never accepts an unknown key)',
  'changed-host-key': 'the host key changed: confirm with the cluster admins, then remove the old key (`ssh-keygen -R HOST`)',
  'needs-login': 'the login needs a person (password, OTP): `evotrainer job login --profile NAME` opens it once; later calls reuse the connection',
  unreachable: 'check the host name (an alias of ~/.ssh/config works), the network or VPN, and ProxyJump',
  ssh: 'run `ssh -v HOST true` to see why ssh failed',
};

/** The configured cluster profile: reachable over the user's OpenSSH in batch mode, with Slurm's tools for a slurm profile. */
export async function checkCluster(profile: NamedProfile | null | undefined, name: string | null | undefined): Promise<DoctorCheck> {
  const base = { id: 'cluster', label: 'Cluster profile', scope: 'cluster' as const, required: false, purpose: 'dispatches training, rollout and eval jobs to a GPU cluster over SSH' };
  if (!profile) {
    return {
      ...base,
      status: 'skipped',
      detail: name ? `Profile "${name}" is named but not defined.` : 'No cluster profile configured: jobs run on the local executor.',
      fix: 'add a cluster profile (clusters: {NAME: {kind: slurm, host: ALIAS, work_dir: …}}) to evotrainer.yaml to run jobs on a cluster',
    };
  }
  if (profile.kind === 'local') return { ...base, status: 'ok', detail: `Profile "${profile.name}": jobs run on this machine.` };
  const where = `${profile.name} (${profile.kind}, host ${profile.host ?? '?'})`;
  try {
    const shell = shellOf(profile);
    const r = await shell.exec('echo evotrainer-ok; for t in sbatch squeue sacct scontrol; do command -v "$t" || echo "missing:$t"; done', { timeoutMs: 30_000 });
    const text = r.stdout.toString('utf8');
    if (r.code !== 0 || !text.includes('evotrainer-ok')) return { ...base, status: 'error', detail: `${where}: the remote shell failed (exit ${r.code}): ${r.stderr.toString().trim().slice(0, 300)}`, fix: 'check the profile\'s setup lines (module load, conda activate)' };
    const missing = [...text.matchAll(/^missing:(\w+)$/gm)].map((m) => m[1]!);
    if (profile.kind === 'slurm' && (missing.includes('sbatch') || missing.includes('squeue'))) {
      return { ...base, status: 'error', detail: `${where}: reachable, but ${missing.join(', ')} not found there`, fix: 'add the line that puts Slurm on PATH (e.g. `module load slurm`) to the profile\'s setup' };
    }
    const tools = profile.kind === 'slurm' ? `; Slurm: ${['sbatch', 'squeue', 'sacct', 'scontrol'].filter((t) => !missing.includes(t)).join(', ')}${missing.includes('sacct') ? ' (no sacct: final states come from scontrol)' : ''}` : '';
    return { ...base, status: 'ok', detail: `${where}: reachable over one multiplexed ssh connection${tools}` };
  } catch (e) {
    if (e instanceof SshError) return { ...base, status: 'error', detail: `${where}: ${e.message}`, fix: SSH_FIX[e.failure].replace(/HOST/g, profile.host ?? 'HOST').replace(/NAME/g, profile.name) };
    return { ...base, status: 'error', detail: `${where}: ${(e as Error).message}` };
  }
}

