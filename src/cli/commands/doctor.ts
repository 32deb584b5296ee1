import { formatDoctorReport, runDoctor } from '../../core/doctor';
import { flagString, out, type Command } from '../command';

export const doctor: Command = {
  summary: 'check git, python3, ssh, sbatch and the embedded store; say what to install',
  flags: {
    json: { type: 'boolean', description: 'print a machine-readable report' },
    python: { type: 'string', description: 'interpreter for harness code (default python3)' },
  },
  async run(flags) {
    const report = await runDoctor({ python: flagString(flags, 'python') });
    out(flags.json ? JSON.stringify(report, null, 2) : formatDoctorReport(report));
    return report.ok ? 0 : 1;
  },
};
