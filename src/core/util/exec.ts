import { execFile } from 'node:child_process';

export interface ExecResult {
  /** null when the program could not be started at all (ENOENT, EACCES). */
  code: number | null;
  stdout: string;
  stderr: string;
  /** The spawn error code, e.g. `ENOENT`, or `ETIMEDOUT` when it ran past the limit. */
  error?: string;
}

/**
 * Runs a program without a shell (arguments are never re-parsed, so names with
 * metacharacters stay inert) and never throws: the caller decides what a failure means.
 */
export function run(file: string, args: readonly string[], opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<ExecResult> {
  return new Promise((resolve) => {
    execFile(
      file,
      args as string[],
      { timeout: opts.timeoutMs ?? 10_000, env: opts.env ?? process.env, cwd: opts.cwd, maxBuffer: 4 * 1024 * 1024, windowsHide: true },
      (err, stdout, stderr) => {
        if (!err) return resolve({ code: 0, stdout, stderr });
        const e = err as NodeJS.ErrnoException & { code?: string | number; killed?: boolean };
        if (e.killed) return resolve({ code: null, stdout, stderr, error: 'ETIMEDOUT' });
        if (typeof e.code === 'number') return resolve({ code: e.code, stdout, stderr });
        resolve({ code: null, stdout, stderr, error: e.code ?? e.message });
      },
    );
  });
}
