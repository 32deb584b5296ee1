// `evotrainer-version:/v3/reward/compute_score.py`: a file as it is at a version's commit.
// Pure string handling (no editor), shared by the content provider and the commands.

export const VERSION_SCHEME = 'evotrainer-version';

export interface VersionFileRef {
  /** `vN`, or a commit id for a version's base. */
  version: string;
  /** Path inside the harness, `/`-separated, no leading slash. */
  file: string;
}

/** The URI path for a file at a version: each segment percent-encoded by the editor's Uri, not here. */
export function versionPath(ref: VersionFileRef): string {
  return `/${ref.version}/${ref.file.replace(/^\/+/, '')}`;
}

/** Parses the path part of a version URI; null when it is not one (a clear error is the caller's). */
export function parseVersionPath(p: string): VersionFileRef | null {
  const m = /^\/(v\d+|[0-9a-f]{7,40})\/(.+)$/.exec(p);
  if (!m) return null;
  const file = m[2]!;
  if (file.split('/').some((s) => s === '..' || s === '')) return null;
  return { version: m[1]!, file };
}
