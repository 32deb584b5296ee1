import { parseConsoleLine } from '../../core/store/curves/verlConsole';
import type { LiveSeries } from './protocol';

/** Points kept per metric of a live series: a chart needs no more, and a week-long log stays bounded. */
export const LIVE_POINTS_MAX = 20_000;
/** A partial line longer than this is not a step line still being written: dropped. */
const CARRY_MAX = 1 << 20;

interface Job {
  series: LiveSeries;
  /** Per array task: the end of the log not yet ended by a newline. */
  carry: Map<string, string>;
  /** Per metric: step → index into its points, so a step logged again (a resumed run) replaces its value. */
  at: Map<string, Map<number, number>>;
}

/**
 * Training curves read from the log of a running job as it streams in: each chunk's
 * complete lines go through verl's console parser (Ray prefixes, colour, progress bars,
 * `np.float64(…)`), the partial last line waits for the next chunk. Listeners get the
 * job's whole series after each chunk that added points. Nothing is written to the
 * store: the job's outputs are imported when they are fetched.
 */
export class LiveCurves {
  private readonly jobs = new Map<string, Job>();
  private readonly listeners = new Set<(s: LiveSeries) => void>();

  onDidChange(listener: (s: LiveSeries) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Every job whose log printed a step line so far. */
  all(): LiveSeries[] {
    return [...this.jobs.values()].map((j) => j.series).filter((s) => Object.keys(s.metrics).length > 0);
  }

  get(jobId: string): LiveSeries | undefined {
    return this.jobs.get(jobId)?.series;
  }

  /** A chunk of the job's log (`task`: its array task, "" for one task). Returns the points it added. */
  feed(jobId: string, run: string, version: string | null, task: string, text: string): number {
    let job = this.jobs.get(jobId);
    if (!job) this.jobs.set(jobId, (job = { series: { jobId, run, version, metrics: {}, done: false }, carry: new Map(), at: new Map() }));
    const lines = ((job.carry.get(task) ?? '') + text).split('\n');
    const rest = lines.pop()!;
    job.carry.set(task, rest.length > CARRY_MAX ? '' : rest);
    let added = 0;
    for (const line of lines) {
      const parsed = parseConsoleLine(line);
      if (!parsed) continue;
      for (const [metric, value] of parsed.values) {
        const points = (job.series.metrics[metric] ??= []);
        let index = job.at.get(metric);
        if (!index) job.at.set(metric, (index = new Map()));
        const i = index.get(parsed.step);
        if (i !== undefined) points[i] = [parsed.step, value];
        else if (points.length < LIVE_POINTS_MAX) {
          index.set(parsed.step, points.length);
          points.push([parsed.step, value]);
        }
        added++;
      }
    }
    if (added) this.emit(job.series);
    return added;
  }

  /** The job ended: its series stays, marked done. */
  finish(jobId: string): void {
    const job = this.jobs.get(jobId);
    if (!job || job.series.done) return;
    job.series.done = true;
    if (Object.keys(job.series.metrics).length) this.emit(job.series);
  }

  private emit(s: LiveSeries): void {
    for (const l of this.listeners) l(s);
  }
}

/** The editor's one hub: job logs followed in the editor feed it, the curves panel reads it. */
export const liveCurves = new LiveCurves();
