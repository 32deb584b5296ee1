/**
 * The engine drives git, python3, ssh and Slurm through POSIX shells, and the platform
 * packages are built for Linux and macOS; on Windows the extension says so and stays off.
 */
export function unsupportedPlatform(platform: NodeJS.Platform): string | null {
  return platform === 'win32'
    ? 'EvoTrainer runs on Linux and macOS hosts. On Windows, open the harness on a Linux machine with Remote-SSH (or in WSL): the extension then runs there, beside the engine, the store and the jobs.'
    : null;
}
