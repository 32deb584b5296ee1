import { createHash } from 'node:crypto';
import { isMap, isNode, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { z } from 'zod';
import { clustersSchema } from '../jobs/profile';

/**
 * `evotrainer.yaml`: the harness manifest. One zod schema is the single source of truth
 * for the CLI, the engine and (as JSON Schema) the editor's completion and hovers.
 */

const pathList = z.array(z.string().min(1)).describe('Paths relative to the harness root; a trailing "/" names a folder.');

const job = z
  .object({
    command: z.string().min(1).describe('Command line run in the harness root (or `cwd`).'),
    cwd: z.string().optional(),
    env: z.record(z.string(), z.string()).optional(),
    timeout_minutes: z.number().positive().optional(),
  })
  .describe('A job the loop launches.');

const threshold = z
  .object({
    warning: z.number().optional(),
    critical: z.number().optional(),
    op: z.enum(['>', '>=', '<', '<=']).optional().describe('How a value compares to the threshold; default ">" (higher is worse).'),
  })
  .describe('Alert thresholds of a metric.');

const fnRef = z.object({ path: z.string().min(1), function: z.string().min(1).optional() }).strict();

const invariant = z.discriminatedUnion('check', [
  z
    .object({
      check: z.literal('ordering_violations'),
      between: z.tuple([z.number(), z.number()]).optional().describe('[higher, lower] correctness levels; default any pair'),
      max: z.number().int().min(0).optional(),
    })
    .strict(),
  z.object({ check: z.enum(['successes_truncated', 'successes_penalized', 'successes_filtered']), max_share: z.number().min(0).max(1) }).strict(),
  z.object({ check: z.literal('effective_data_share'), min: z.number().min(0).max(1) }).strict(),
  z.object({ check: z.literal('dead_group_ratio'), max: z.number().min(0).max(1) }).strict(),
]);

export type Invariant = z.infer<typeof invariant>;

export const EVAL_HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;

export const manifestSchema = z
  .object({
    name: z.string().min(1).describe('Name of the harness.'),
    domain: z.string().min(1).describe('Task domain: math, swe, coding, … (skills record the domains they worked in).'),
    trainer: z.string().min(1).optional().describe('RL trainer whose dumps runs write: verl, trl, skyrl, rllm, prime-rl, roll.'),
    policy: z.string().min(1).optional().describe('Policy model being trained, e.g. Qwen/Qwen2.5-7B-Instruct.'),
    primary_metric: z.string().min(1).optional().describe('Score-layer metric versions are compared on (higher is better), e.g. pass_rate.'),
    eval_set: z
      .object({
        path: z.string().min(1).describe('Evaluation data; identical across versions.'),
        hash: z.string().regex(EVAL_HASH_PATTERN, 'must be "sha256:" followed by 64 lowercase hex digits (set by `evotrainer init`)').optional(),
      })
      .strict()
      .optional()
      .describe('The eval-set pin: a version whose eval set hashes differently is refused.'),
    action_boundary: z
      .object({
        editable: pathList.optional().describe('What an intervention may change (reward logic, filters, env config, version configs). Empty = everything not frozen.'),
        frozen: pathList.optional().describe('What an intervention may never touch (framework core, hardware setup, evaluation data).'),
      })
      .strict()
      .optional(),
    jobs: z.object({ train: job.optional(), rollout: job.optional(), eval: job.optional(), backtest: job.optional() }).strict().optional(),
    clusters: clustersSchema.optional().describe('Cluster profiles by name (kind local | ssh | slurm, host, work_dir, setup, sbatch defaults, …).'),
    cluster: z.string().min(1).optional().describe('Name of the default profile in clusters (default: the only one, else the local executor).'),
    python: z.string().min(1).optional().describe('Interpreter that runs harness code (reward functions, filters) in backtests; default python3.'),
    reward: z
      .object({
        path: z.string().min(1).describe('Reward module, relative to the harness root.'),
        function: z.string().min(1).optional().describe('Function name; default compute_score (verl) or reward_func (trl).'),
        signature: z.enum(['verl', 'trl']).optional().describe("verl: compute_score(data_source, solution_str, ground_truth, extra_info=None) -> float | dict; trl: f(prompts, completions, **columns) -> list[float | None]."),
      })
      .strict()
      .optional()
      .describe('The reward code training runs; backtests re-score cached rollouts with it. Default: reward/compute_score.py:compute_score (verl).'),
    filters: z
      .object({
        group: fnRef.optional().describe('keep_group(rollouts) -> bool over one GRPO group. Default: filters/group_filter.py:keep_group when present.'),
        trajectory: fnRef.optional().describe('keep_trajectory(rollout) -> bool. Default: filters/group_filter.py:keep_trajectory when present.'),
      })
      .strict()
      .optional(),
    backtest: z
      .object({
        invariants: z.array(invariant).optional().describe('Safety invariants a backtest must pass, e.g. {check: ordering_violations, between: [1.0, 0.1], max: 0}.'),
        timeout_seconds: z.number().positive().optional().describe('Per-call limit of harness code (default 10).'),
        memory_mb: z.number().int().positive().optional().describe('Address-space cap of each worker (default 4096).'),
        workers: z.number().int().positive().optional().describe('Python workers (default: one per core).'),
        batch_size: z.number().int().positive().optional(),
      })
      .strict()
      .optional(),
    gate: z
      .object({
        confidence: z.number().gt(0.5).lt(1).optional().describe('Interval level of every before/after comparison (default 0.95).'),
        bootstrap_reps: z.number().int().min(200).optional(),
        non_regression_margin: z.number().min(0).optional().describe('A primary-metric drop whose interval lies entirely below −margin is a regression (default 0).'),
        leak: z
          .object({ metric: z.string().min(1).optional(), max: z.number().min(0).optional() })
          .strict()
          .optional()
          .describe('Information-leak check: default git_history_share above 0.05 (or rising beyond noise) rejects.'),
        bug_patterns: z
          .array(z.object({ pattern: z.string().min(1).describe('Regular expression over added lines of the diff.'), paths: pathList.optional(), message: z.string().min(1) }).strict())
          .optional()
          .describe('Bug classes this harness declares, e.g. a penalty written into the advantages.'),
      })
      .strict()
      .optional()
      .describe('Promotion gate settings.'),
    autonomy: z.enum(['manual', 'human_gated', 'autonomous']).optional().describe('How much of the loop runs without a person.'),
    gates: z
      .object({ diagnosis: z.boolean().optional(), design: z.boolean().optional(), backtest: z.boolean().optional(), completion: z.boolean().optional() })
      .strict()
      .optional()
      .describe('Human gates (APPROVE / REVISE / ABORT) after each step.'),
    thresholds: z.record(z.string(), threshold).optional(),
    skills: z.object({ library: z.string().optional().describe('Folder (or git checkout) of the skill library shared across harnesses.') }).strict().optional(),
  })
  .strict()
  .superRefine((m, ctx) => {
    if (m.cluster && m.cluster !== 'local' && !m.clusters?.[m.cluster]) {
      ctx.addIssue({ code: 'custom', path: ['cluster'], message: `no profile "${m.cluster}" under clusters (known: ${Object.keys(m.clusters ?? {}).join(', ') || 'none'})` });
    }
  });

export type Manifest = z.infer<typeof manifestSchema>;

export const MANIFEST_FILE = 'evotrainer.yaml';

/** The JSON Schema the editor (yaml language support, our language server) validates with. */
export function manifestJsonSchema(): Record<string, unknown> {
  return { ...z.toJSONSchema(manifestSchema, { target: 'draft-07' }), title: 'EvoTrainer harness manifest (evotrainer.yaml)' };
}

export interface ManifestProblem {
  severity: 'error' | 'warning';
  /** 1-based, as editors and `file:line:col` show them. */
  line: number;
  column: number;
  length: number;
  message: string;
}

function nodeRange(node: unknown): [number, number] | null {
  return isNode(node) && node.range ? [node.range[0], node.range[1]] : null;
}

/** The YAML node of a path, or its nearest existing ancestor (for missing keys). */
function locate(doc: Document, path: readonly PropertyKey[], key?: string): [number, number] | null {
  let node: unknown = doc.contents;
  let best = nodeRange(node);
  for (const seg of path) {
    if (!isMap(node) && !isSeq(node)) break;
    const next: unknown = node.get(seg, true);
    if (next === undefined) break;
    node = next;
    best = nodeRange(node) ?? best;
  }
  if (key !== undefined && isMap(node)) {
    const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === key);
    if (pair && isScalar(pair.key)) best = nodeRange(pair.key) ?? best;
  }
  return best;
}

/**
 * Parses and validates manifest text. Every problem carries its line and column; an
 * unknown key is a warning (likely a typo), everything else an error.
 */
export function checkManifest(text: string): { manifest: Manifest | null; problems: ManifestProblem[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const problems: ManifestProblem[] = [];
  const at = (range: [number, number] | null, severity: ManifestProblem['severity'], message: string) => {
    const [start, end] = range ?? [0, 1];
    const { line, col } = lineCounter.linePos(start);
    problems.push({ severity, line, column: col, length: Math.max(1, end - start), message });
  };
  for (const e of [...doc.errors, ...doc.warnings]) at([e.pos[0], e.pos[1]], doc.errors.includes(e) ? 'error' : 'warning', e.message.split('\n')[0]!);
  if (doc.errors.length) return { manifest: null, problems };
  if (!isMap(doc.contents)) {
    problems.push({ severity: 'error', line: 1, column: 1, length: 1, message: 'evotrainer.yaml must be a mapping of keys (name, domain, primary_metric, …).' });
    return { manifest: null, problems };
  }
  const js = doc.toJS() as Record<string, unknown>;
  const parsed = manifestSchema.safeParse(js);
  if (parsed.success) return { manifest: parsed.data, problems };
  const absent = (p: readonly PropertyKey[]) => {
    let v: unknown = js;
    for (const seg of p) {
      if (v === null || typeof v !== 'object' || !(seg in (v as object))) return true;
      v = (v as Record<PropertyKey, unknown>)[seg];
    }
    return false;
  };
  const missing = (i: (typeof parsed.error.issues)[number]) => i.code === 'invalid_type' && absent(i.path);
  // Missing keys first, in schema order, as the editor lists them.
  const issues = [...parsed.error.issues].sort((a, b) => Number(missing(b)) - Number(missing(a)));
  for (const issue of issues) {
    const dotted = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        at(locate(doc, issue.path, key), 'warning', `Unknown key "${[...issue.path.map(String), key].join('.')}" (not part of the evotrainer.yaml schema; a typo?).`);
      }
    } else if (missing(issue)) {
      at(locate(doc, issue.path.slice(0, -1)), 'error', `Missing required key "${dotted}".`);
    } else {
      at(locate(doc, issue.path), 'error', `${dotted || 'manifest'}: ${issue.message}`);
    }
  }
  if (problems.some((p) => p.severity === 'error')) return { manifest: null, problems };
  // Unknown keys alone do not make a manifest unusable: validate again without them.
  for (const issue of parsed.error.issues) {
    if (issue.code !== 'unrecognized_keys') continue;
    let obj: unknown = js;
    for (const seg of issue.path) obj = (obj as Record<PropertyKey, unknown>)[seg];
    for (const key of issue.keys) delete (obj as Record<string, unknown>)[key];
  }
  return { manifest: manifestSchema.safeParse(js).data ?? null, problems };
}

export class ManifestError extends Error {
  constructor(
    readonly file: string,
    readonly problems: ManifestProblem[],
  ) {
    super(problems.filter((p) => p.severity === 'error').map((p) => `${file}:${p.line}:${p.column}: ${p.message}`).join('\n') + `\nFix ${file} (see \`evotrainer schema\` for every key).`);
  }
}

/** Parses a manifest or throws with `file:line:col` for each error. */
export function parseManifest(text: string, file = MANIFEST_FILE): Manifest {
  const { manifest, problems } = checkManifest(text);
  if (!manifest) throw new ManifestError(file, problems);
  return manifest;
}

export function hashContent(content: Buffer | string): string {
  return `sha256:${createHash('sha256').update(content).digest('hex')}`;
}

/** Sets `eval_set.hash` in the text, keeping comments and layout. */
export function withEvalHash(text: string, hash: string): string {
  const doc = parseDocument(text);
  doc.setIn(['eval_set', 'hash'], hash);
  return doc.toString({ flowCollectionPadding: false });
}

/** Does `p` fall under the boundary entry `entry` (a file, or a folder with or without "/")? */
export function pathMatches(entry: string, p: string): boolean {
  const e = entry.replace(/^\.\//, '');
  if (e.endsWith('/')) return p.startsWith(e);
  return p === e || p.startsWith(`${e}/`);
}
