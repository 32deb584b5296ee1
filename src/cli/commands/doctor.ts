import { formatDoctorReport, runDoctor } from '../../core/doctor';
import { checkCluster } from '../../core/doctor/cluster';
import { resolveProfile, type NamedProfile } from '../../core/jobs';
import { flagString, out, type Command } from '../command';
import { harnessContext } from '../context';

export const doctor: Command = {
  summary: "check git, python3, ssh, sbatch, the decoders of compressed dumps, the embedded store and the harness's cluster profile; say what to install",
  flags: {
    json: { type: 'boolean', description: 'print a machine-readable report' },
    python: { type: 'string', description: 'interpreter for harness code (default python3)' },
    profile: { type: 'string', description: "check this cluster profile of the harness here (default: the manifest's cluster)" },
  },
  async run(flags) {
    const name = flagString(flags, 'profile');
    const m = harnessContext(flags).manifest();
    let cluster: NamedProfile | null = null;
    if (m) {
      if (name || m.cluster || Object.keys(m.clusters ?? {}).length) cluster = resolveProfile(m.clusters, name, m.cluster);
    } else if (name) throw new Error(`--profile ${name}: no harness (evotrainer.yaml) here to read profiles from`);
    const report = await runDoctor({ python: flagString(flags, 'python') ?? m?.python, clusterCheck: () => checkCluster(cluster, name), clusterProfile: cluster?.name ?? null });
    out(flags.json ? JSON.stringify(report, null, 2) : formatDoctorReport(report));
    return report.ok ? 0 : 1;
  },
};
