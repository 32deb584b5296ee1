import { checkManifest, type ManifestProblem } from './manifest';

export type { ManifestProblem };

/**
 * Checks `evotrainer.yaml` text against the manifest schema (YAML errors, missing and
 * mistyped keys, unknown keys), each problem with its 1-based line and column.
 */
export function checkManifestText(text: string): ManifestProblem[] {
  return checkManifest(text).problems;
}
