/**
 * Jobs on clusters (connection, submit, monitor, fetch): the engine the CLI (`evotrainer job …`), the editor (Runs view, Launch
 * and Cancel commands), the backtest engine and the evolve loop share.
 *
 * Profiles (`clusterProfileSchema`, `clustersSchema`; manifest `clusters:` + `cluster:`
 * default, editor setting `evotrainer.clusters`): kind local | ssh | slurm, host (an
 * ~/.ssh/config alias), ssh_config, work_dir, setup lines, sbatch defaults, gpus,
 * concurrency, poll_seconds. `resolveProfile(clusters, name, default)` picks one.
 *
 * Transport: the system OpenSSH client, `BatchMode=yes`, `StrictHostKeyChecking=yes` (an
 * unknown host key is an `SshError` with failure "unknown-host-key", never accepted), one
 * multiplexed connection per host (ControlMaster=auto, ControlPersist, sockets in a private
 * 0700 directory, `controlDir()`). A login that needs a person (an `SshError` with failure
 * "needs-login"): run `loginArgv(profile)` in a terminal; later batch calls reuse that
 * connection (`evotrainer job login` does the same in the CLI). Every command is
 * built with `shQuote` / `shJoin` / `shPath`.
 *
 * API:
 *   submitJob({profile, harness, commit, version, run, script | templateName, vars, array,
 *              outputs, key, timeoutMinutes, records}) → JobRecord
 *     Syncs the commit (bare repo + worktree per commit in work_dir), renders the script
 *     (`jobs/<name>.sbatch` at the commit, else manifest `jobs.<name>`; placeholders
 *     {{version}} {{commit}} {{run}} {{workdir}} {{jobdir}} {{job}} {{profile.*}} {{vars.*}}),
 *     starts it (sbatch --parsable [--array=0-(N-1)]; detached setsid runner for ssh/local).
 *     With `key`, a second submit returns the first job (also across processes and crashes).
 *     The script runs in the worktree with $EVOTRAINER_JOB_DIR (where outputs go),
 *     $EVOTRAINER_JOB_ID, $EVOTRAINER_VERSION, $EVOTRAINER_RUN, $EVOTRAINER_COMMIT and,
 *     for arrays, $SLURM_ARRAY_TASK_ID.
 *   waitForJob(id, {onLog, onState, onOffline, signal, pollMs, records}) → final JobRecord
 *     Logs stream from the offsets kept in the record (resumes after a restart or a dropped
 *     connection; nothing is repeated). All jobs followed at once cost one status command
 *     (one squeue) and one log command per interval. A dropped connection calls onOffline
 *     and retries; the job is not lost.
 *   refreshJobs(records, ids?) → JobRecord[]   one poll per profile, records saved.
 *   cancelJob(id, {records})                    scancel / TERM to the runner's group.
 *   fetchOutputs(id, localDir, {records, store}) → FetchResult
 *     rsync (else tar over ssh), skip-if-verified, size + sha256 verification, optional
 *     incremental import into a RolloutStore.
 *   JobRecords(dir): records (default <harness>/.evotrainer/jobs, or $EVOTRAINER_JOBS_DIR):
 *     get, list, byKey(key), save.
 *
 * JobRecord: state (submitting | pending | running | completed | failed | cancelled |
 * timeout | oom | node_fail | lost), tasks (per array task: state, exitCode), exitCode,
 * startedAt, endedAt, elapsedSeconds, gpus, gpuHours (elapsed × gpus), failure {reason,
 * message, logTail, nextStep}, fetched {path: {size, sha256}}, source (squeue, sacct,
 * scontrol or exit file).
 */
export { clusterProfileSchema, clustersSchema, LOCAL_PROFILE, parseProfiles, pollMs, ProfileError, profileGpus, resolveProfile, type ClusterProfile, type NamedProfile } from './profile';
export { joinRemote, shJoin, shPath, shQuote } from './quote';
export { controlDir, LocalShell, loginArgv, shellFor, SshError, SshTransport, type Shell, type ShellResult, type SshFailure } from './shell';
export { FINAL_STATES, isFinal, JobRecords, type FetchedFile, type JobFailure, type JobRecord, type JobState, type TaskState } from './records';
export { loadTemplate, renderTemplate, TemplateError, templateValues, withPrelude } from './render';
export { classifyFailure, combineStates, mapSlurmState, parseSacct, parseScontrol, parseSqueue } from './slurm';
export { JobError, recordsFor, shellOf } from './connection';
export { submitJob, syncCommit, type SubmitOptions } from './submit';
export { cancelJob, monitorPolls, pollStates, refreshJobs, waitForJob, type LogChunk, type WaitOptions } from './monitor';
export { fetchOutputs, type FetchResult, type FetchStore } from './fetch';
export { displayLine, JobLogView, LogLines, MAX_DISPLAY_LINE } from './logLines';
