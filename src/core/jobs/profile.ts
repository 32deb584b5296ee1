import { z } from 'zod';

/**
 * Cluster profiles: where a job runs. Used by the harness manifest (`clusters:`) and by the
 * editor setting `evotrainer.clusters` (the same schema, as JSON Schema).
 */

const sbatchSchema = z
  .object({
    partition: z.string().min(1).optional(),
    account: z.string().min(1).optional(),
    gres: z.string().min(1).optional().describe('Generic resources, e.g. gpu:8 (written as --gres).'),
    gpus: z.number().int().nonnegative().optional().describe('GPUs per job (written as --gres=gpu:N unless gres is set); GPU-hours = elapsed × gpus.'),
    nodes: z.number().int().positive().optional(),
    cpus_per_task: z.number().int().positive().optional(),
    mem: z.string().min(1).optional().describe('Memory per node, e.g. 64G.'),
    time: z.string().min(1).optional().describe('Time limit, e.g. 04:00:00 (overrides the template\'s timeout_minutes).'),
    extra: z.array(z.string().min(1)).optional().describe('Further sbatch options, each one argument, e.g. --qos=high.'),
  })
  .strict();

export const clusterProfileSchema = z
  .object({
    kind: z.enum(['local', 'ssh', 'slurm']).describe('local: run here (the demo default); ssh: run detached on the host; slurm: sbatch on the host.'),
    host: z.string().min(1).optional().describe('SSH host, as in ~/.ssh/config (an alias works: ProxyJump, agents and certificates come from there).'),
    ssh_config: z.string().min(1).optional().describe('An ssh_config file to use instead of ~/.ssh/config (ssh -F).'),
    work_dir: z.string().min(1).optional().describe('Work directory on the host ("~/" = the remote home); default ~/evotrainer, or .evotrainer/jobs for local.'),
    setup: z.array(z.string()).optional().describe('Environment setup lines run before every command and job (module load, conda activate, export).'),
    sbatch: sbatchSchema.optional().describe('sbatch defaults (slurm profiles).'),
    gpus: z.number().nonnegative().optional().describe('GPUs a job holds on local and ssh profiles (for GPU-hours).'),
    concurrency: z.number().int().positive().optional().describe('At most this many jobs of this profile queued or running at once.'),
    poll_seconds: z.number().positive().optional().describe('Seconds between status polls (one squeue per interval for all jobs); default 10.'),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.kind !== 'local' && !p.host) ctx.addIssue({ code: 'custom', path: ['host'], message: `a ${p.kind} profile needs "host" (an SSH host or ~/.ssh/config alias)` });
    if (p.kind !== 'slurm' && p.sbatch) ctx.addIssue({ code: 'custom', path: ['sbatch'], message: `"sbatch" applies to slurm profiles only (this one is ${p.kind})` });
  });

export type ClusterProfile = z.infer<typeof clusterProfileSchema>;

export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export const clustersSchema = z
  .record(z.string().regex(PROFILE_NAME, 'profile names use letters, digits, ".", "_" and "-"'), clusterProfileSchema)
  .describe('Cluster profiles by name.');

/** A profile with its name: what jobs carry. */
export interface NamedProfile extends ClusterProfile {
  name: string;
}

/** The local executor: what runs when nothing is configured. */
export const LOCAL_PROFILE: NamedProfile = { name: 'local', kind: 'local' };

export class ProfileError extends Error {}

/**
 * Picks a profile: by name, else the manifest's default (`cluster:`), else the only one,
 * else the local executor.
 */
export function resolveProfile(clusters: Record<string, ClusterProfile> | undefined, name?: string | null, defaultName?: string | null): NamedProfile {
  const all = clusters ?? {};
  const want = name ?? defaultName ?? (Object.keys(all).length === 1 ? Object.keys(all)[0] : null);
  if (!want) return LOCAL_PROFILE;
  const p = all[want];
  if (!p) {
    if (want === 'local') return LOCAL_PROFILE;
    const known = Object.keys(all);
    throw new ProfileError(`no cluster profile "${want}"; ${known.length ? `known: ${known.join(', ')}` : 'none is configured'} (add it under "clusters:" in evotrainer.yaml or the evotrainer.clusters setting)`);
  }
  return { ...p, name: want };
}

/** Validates profiles from any source (a settings object, a file) with a clear message. */
export function parseProfiles(value: unknown, where: string): Record<string, ClusterProfile> {
  const r = clustersSchema.safeParse(value);
  if (r.success) return r.data;
  const lines = r.error.issues.map((i) => `${where}: ${i.path.map(String).join('.') || 'profiles'}: ${i.message}`);
  throw new ProfileError(`${lines.join('\n')}\nEach profile needs kind (local | ssh | slurm) and, for ssh and slurm, host.`);
}

export function pollMs(p: ClusterProfile): number {
  return Math.round((p.poll_seconds ?? 10) * 1000);
}

export function profileGpus(p: ClusterProfile): number {
  if (p.kind === 'slurm') {
    const g = p.sbatch?.gpus;
    if (g !== undefined) return g;
    const m = /gpu(?::[^:,]+)?:(\d+)/.exec(p.sbatch?.gres ?? '');
    return m ? Number(m[1]) : 0;
  }
  return p.gpus ?? 0;
}
