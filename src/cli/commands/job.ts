import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { readWorkingManifest } from '../../core/harness/repo';
import { cancelJob, fetchOutputs, isFinal, JobLogView, parseProfiles, recordsFor, refreshJobs, resolveProfile, shellOf, shQuote, SshTransport, submitJob, waitForJob, type JobRecord, type NamedProfile } from '../../core/jobs';
import { RolloutStore } from '../../core/store/store';
import { UsageError } from '../args';
import { flagString, out, type Command } from '../command';
import { harnessContext } from '../context';

function profileFrom(flags: Record<string, string | boolean>, root: string | null): NamedProfile {
  const file = flagString(flags, 'profiles');
  if (file) {
    const text = readFileSync(file, 'utf8');
    return resolveProfile(parseProfiles(parseYaml(text), file), flagString(flags, 'profile'));
  }
  const m = root ? readWorkingManifest(root) : null;
  return resolveProfile(m?.clusters, flagString(flags, 'profile'), m?.cluster);
}

function line(r: JobRecord): string {
  const gpu = r.gpuHours !== null ? ` ${r.gpuHours.toFixed(2)} GPU-h` : '';
  const el = r.elapsedSeconds !== null ? ` ${Math.round(r.elapsedSeconds)}s` : '';
  return `${r.id}  ${r.state.padEnd(10)} ${r.profile.name}${r.remoteId ? `#${r.remoteId}` : ''}  ${r.template}${r.version ? ` ${r.version}` : ''}${r.key ? ` [${r.key}]` : ''}${el}${gpu}`;
}

function failureText(r: JobRecord): string {
  if (!r.failure) return '';
  return [`${r.failure.message}.`, r.failure.logTail ? `--- log tail ---\n${r.failure.logTail.trimEnd()}\n---` : '', `Next: ${r.failure.nextStep}`].filter(Boolean).join('\n');
}

/**
 * Follows a job, printing its log as a terminal shows it: whole lines (a progress bar's last
 * redraw), and on a terminal the line being drawn, redrawn in place.
 */
async function follow(id: string, records: ReturnType<typeof recordsFor>, json: boolean, array: boolean): Promise<JobRecord> {
  const view = new JobLogView(array);
  const live = process.stdout.isTTY === true;
  let drawn = 0;
  const print = (text: string, task: string | null) => {
    // Over the line drawn last: blanks where the new text is shorter.
    const clear = (n: number) => (drawn > n ? ' '.repeat(drawn - n) : '');
    if (text) {
      const first = text.indexOf('\n');
      process.stdout.write(`${text.slice(0, first)}${clear(first)}${text.slice(first)}`);
      drawn = 0;
    }
    const now = task === null ? '' : view.pending(task);
    if (live && now) {
      process.stdout.write(`${now}${clear(now.length)}\r`);
      drawn = now.length;
    }
  };
  const done = await waitForJob(id, {
    records,
    follower: 'cli',
    onLog: (c) => {
      if (!json) print(view.write(c.task, c.text), c.task);
    },
    onOffline: (e) => process.stderr.write(`evotrainer job: ${e.message}; retrying (the job keeps running)\n`),
  });
  if (!json) print(view.end(), null);
  return done;
}

const exitFor = (r: JobRecord) => (r.state === 'completed' ? 0 : 1);

export const job: Command = {
  summary: 'job submit|list|logs|cancel|fetch|login: training, rollout, eval and backtest jobs on local, ssh and Slurm profiles',
  usage: [
    'evotrainer job submit (--template NAME | --script FILE) [--profile P] [--commit REV] [--version V] [--run R] [--key K] [--vars JSON] [--array N] [--outputs a,b] [--wait]',
    '       evotrainer job list [--refresh]',
    '       evotrainer job logs ID [--follow]',
    '       evotrainer job cancel ID',
    '       evotrainer job fetch ID [--to DIR] [--import]',
    '       evotrainer job login [--profile P]   (a login needing a password or OTP; later calls reuse it)',
  ].join('\n'),
  flags: {
    harness: { type: 'string', description: 'harness repo (default: the one containing the working directory)' },
    profile: { type: 'string', description: 'cluster profile name (default: the manifest\'s cluster, else local)' },
    profiles: { type: 'string', description: 'YAML/JSON file of profiles {name: profile} instead of the manifest\'s clusters' },
    template: { type: 'string', description: 'job template: jobs/NAME.sbatch or the manifest\'s jobs.NAME' },
    script: { type: 'string', description: 'a script file to run instead of a template' },
    commit: { type: 'string', description: 'harness commit to run (default HEAD)' },
    version: { type: 'string', description: 'version the job belongs to ({{version}})' },
    run: { type: 'string', description: 'run name ({{run}}; the store run of fetched rollouts)' },
    key: { type: 'string', description: 'idempotency key: a second submit with it returns the first job' },
    vars: { type: 'string', description: 'JSON object of further template values, e.g. {"lr":"1e-6"}' },
    array: { type: 'string', description: 'array job of N tasks (each reads $SLURM_ARRAY_TASK_ID)' },
    outputs: { type: 'string', description: 'comma-separated output paths in the job directory to fetch back' },
    wait: { type: 'boolean', description: 'follow the job to its end, streaming its log' },
    follow: { type: 'boolean', description: 'logs: stream new output until the job ends (resumes where the last follow stopped)' },
    refresh: { type: 'boolean', description: 'list: poll the clusters first (one squeue per profile)' },
    to: { type: 'string', description: 'fetch: local directory (default .evotrainer/jobs/outputs/ID)' },
    import: { type: 'boolean', description: 'fetch: import the fetched rollouts into the store' },
    'jobs-dir': { type: 'string', description: 'job records folder (default .evotrainer/jobs of the harness, or $EVOTRAINER_JOBS_DIR)' },
    json: { type: 'boolean', description: 'print JSON' },
  },
  async run(flags, [sub, id]) {
    const ctx = harnessContext(flags);
    const root = ctx.root;
    const dirFlag = flagString(flags, 'jobs-dir');
    if (dirFlag) process.env.EVOTRAINER_JOBS_DIR = path.resolve(dirFlag);
    const records = recordsFor(root);
    const json = flags.json === true;
    const needId = () => {
      if (!id) throw new UsageError(`job ${sub} needs a job id (see \`evotrainer job list\`)`);
      return records.require(id);
    };
    switch (sub) {
      case 'submit': {
        const template = flagString(flags, 'template');
        const scriptFile = flagString(flags, 'script');
        if (!template === !scriptFile) throw new UsageError('give one of --template NAME or --script FILE');
        let vars: Record<string, string> = {};
        const v = flagString(flags, 'vars');
        if (v) {
          try {
            vars = Object.fromEntries(Object.entries(JSON.parse(v) as Record<string, unknown>).map(([k, x]) => [k, String(x)]));
          } catch {
            throw new UsageError(`--vars must be a JSON object, e.g. '{"lr":"1e-6"}' (got ${v.slice(0, 60)})`);
          }
        }
        const arrayFlag = flagString(flags, 'array');
        const array = arrayFlag === undefined ? null : Number(arrayFlag);
        if (array !== null && (!Number.isInteger(array) || array < 1)) throw new UsageError(`--array needs a positive whole number of tasks, not ${arrayFlag}`);
        const r = await submitJob({
          profile: profileFrom(flags, root),
          records,
          harness: root,
          commit: flagString(flags, 'commit'),
          version: flagString(flags, 'version'),
          run: flagString(flags, 'run'),
          key: flagString(flags, 'key'),
          templateName: template,
          script: scriptFile ? readFileSync(scriptFile, 'utf8') : undefined,
          vars,
          array,
          outputs: (flagString(flags, 'outputs') ?? '').split(',').map((s) => s.trim()).filter(Boolean),
        });
        if (!json) process.stderr.write(`${line(r)}\n`);
        if (!flags.wait || isFinal(r.state)) {
          if (json) out(JSON.stringify(r, null, 2));
          else if (r.failure) process.stderr.write(`${failureText(r)}\n`);
          return r.state === 'failed' ? 1 : 0;
        }
        const done = await follow(r.id, records, json, Boolean(r.array));
        if (json) out(JSON.stringify(done, null, 2));
        else process.stderr.write(`${line(done)}\n${failureText(done)}${done.failure ? '\n' : ''}`);
        return exitFor(done);
      }
      case 'list': {
        const list = flags.refresh ? await refreshJobs(records) : records.list();
        out(json ? JSON.stringify(list, null, 2) : list.length ? list.map(line).join('\n') : `No jobs in ${records.dir}.`);
        return 0;
      }
      case 'logs': {
        const r = needId();
        if (flags.follow) {
          const done = await follow(r.id, records, json, Boolean(r.array));
          if (!json) process.stderr.write(`${line(done)}\n${failureText(done)}${done.failure ? '\n' : ''}`);
          else out(JSON.stringify(done, null, 2));
          return exitFor(done);
        }
        if (!r.jobDir) throw new Error(`job ${r.id} has no log yet (state ${r.state})`);
        const files = r.array ? Array.from({ length: r.array }, (_, i) => `${r.jobDir}/log.${i}`) : [`${r.jobDir}/log`];
        for (const [i, f] of files.entries()) {
          const res = await shellOf(r.profile).exec(`cat ${shQuote(f)} 2>/dev/null`);
          // As a terminal shows it: a progress bar's last redraw, long lines cut.
          const view = new JobLogView(Boolean(r.array));
          const task = r.array ? String(i) : '';
          process.stdout.write(view.write(task, res.stdout.toString('utf8')) + view.end());
        }
        return 0;
      }
      case 'cancel': {
        const r = await cancelJob(needId().id, { records });
        out(`cancel sent: ${line(r)}`);
        return 0;
      }
      case 'fetch': {
        const r = needId();
        const to = path.resolve(flagString(flags, 'to') ?? path.join(records.dir, 'outputs', r.id));
        let store: RolloutStore | null = null;
        if (flags.import) store = await RolloutStore.open(ctx.storePath);
        try {
          const f = await fetchOutputs(r.id, to, { records, store: store ?? undefined });
          if (json) out(JSON.stringify(f, null, 2));
          else out(`${f.files.filter((x) => x.status === 'fetched').length} file(s) fetched, ${f.files.filter((x) => x.status === 'unchanged').length} unchanged (${f.transport}, size and sha256 verified) into ${to}${f.imported !== undefined ? `; ${f.imported} rollout(s) imported` : ''}`);
        } finally {
          store?.close();
        }
        return 0;
      }
      case 'login': {
        // A login that needs a person (password, OTP): ssh in this terminal opens the shared
        // connection and leaves it up; every later batch call reuses it.
        const profile = profileFrom(flags, root);
        if (profile.kind === 'local') throw new UsageError(`profile "${profile.name}" runs jobs here: nothing to log in to`);
        const argv = new SshTransport(profile).loginArgv();
        const r = spawnSync(argv[0]!, argv.slice(1), { stdio: 'inherit' });
        if (r.status !== 0) throw new Error(`the login to ${profile.host} failed (ssh exit ${r.status ?? r.signal})`);
        out(`Connected to ${profile.host}; jobs of "${profile.name}" reuse this connection.`);
        return 0;
      }
      default:
        throw new UsageError('use `job submit`, `job list`, `job logs`, `job cancel`, `job fetch` or `job login`');
    }
  },
};
