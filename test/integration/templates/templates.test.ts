import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { CATALOG } from '../../../src/core/diagnose/catalog';
import { loadUserMetrics, loadUserRules } from '../../../src/core/diagnose/userDiagnostics';
import { initHarness, listTemplates } from '../../../src/core/harness/init';
import { checkManifest, EVAL_HASH_PATTERN, hashContent } from '../../../src/core/harness/manifest';
import { gsm8kFile, requireSharedData } from '../../helpers/data';
import { repoRoot, tempDir } from '../../helpers/tmp';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

// The math, code and swe harness templates: `evotrainer init --template X` through the
// engine, then each harness's own Python tests (real python3, real git, the real sandbox),
// its diagnostics as the engine loads them, its Slurm job, and the math reward against the
// labelled GSM8K solutions and a public answer-equivalence suite.

const TEMPLATES = ['math', 'code', 'swe'] as const;
const FIXTURES = path.join(repoRoot, 'test', 'fixtures', 'templates');
const IDENTITY = { GIT_AUTHOR_NAME: 'Test Person', GIT_AUTHOR_EMAIL: 'test@example.invalid', GIT_COMMITTER_NAME: 'Test Person', GIT_COMMITTER_EMAIL: 'test@example.invalid' };
Object.assign(process.env, IDENTITY);

function python(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}, input?: string) {
  return spawnSync('python3', args, { cwd, encoding: 'utf8', env: { ...process.env, ...env }, input, timeout: 600_000, maxBuffer: 64 * 1024 * 1024 });
}

/** Runs the harness's unittest suite; every test must pass and none may be skipped. */
function unittests(dir: string, env: NodeJS.ProcessEnv = {}): { ran: number; names: Map<string, string> } {
  const r = python(dir, ['-m', 'unittest', '-v'], env);
  const out = `${r.stdout}\n${r.stderr}`;
  assert.equal(r.status, 0, `python3 -m unittest failed in ${dir}:\n${out.slice(-6000)}`);
  const ran = Number(/^Ran (\d+) tests? in/m.exec(out)?.[1] ?? 0);
  assert.match(out, /^OK$/m, `not a plain OK (skipped or expected failures count as failures here):\n${out.slice(-3000)}`);
  const names = new Map<string, string>();
  for (const m of out.matchAll(/^(\w+) \(([\w.]+)\)(?:\n[^\n]*?)? \.\.\. (\w+)/gm)) names.set(m[1]!, m[3]!);
  return { ran, names };
}

/** A harness from the template, in `base` (a tempDir made at describe level) under a name that needs quoting. */
async function init(template: string, base: string): Promise<string> {
  const dir = path.join(base, `${template} harness "$(x)"`);
  const r = await initHarness(dir, template);
  assert.match(r.commit, /^[0-9a-f]{40}$/);
  assert.equal(r.entry.status, 'promoted');
  return dir;
}

describe('harness templates: init, manifest, diagnostics', () => {
  const base = tempDir('evotrainer-templates-');
  it('lists math, code and swe among the templates', () => {
    const names = listTemplates();
    for (const t of TEMPLATES) assert.ok(names.includes(t), `${t} missing from ${names.join(', ')}`);
  });

  for (const t of TEMPLATES) {
    it(`${t}: init pins the eval set, the manifest is valid, and the default diagnostics load cleanly`, async () => {
      const dir = await init(t, path.join(base, 'check'));
      const text = readFileSync(path.join(dir, 'evotrainer.yaml'), 'utf8');
      const { manifest, problems } = checkManifest(text);
      assert.deepEqual(problems, []);
      assert.ok(manifest);
      assert.equal(manifest.domain, t);
      assert.equal(manifest.primary_metric, 'pass_rate');
      assert.match(manifest.eval_set?.hash ?? '', EVAL_HASH_PATTERN);
      assert.equal(manifest.eval_set?.hash, hashContent(readFileSync(path.join(dir, manifest.eval_set!.path))));
      assert.ok(manifest.action_boundary?.frozen?.includes('data/eval.jsonl'));
      for (const k of ['dead_group_ratio', 'reward_spread']) assert.ok(manifest.thresholds?.[k], `threshold ${k}`);
      for (const f of ['reward/compute_score.py', 'reward/trl_reward.py', 'filters/group_filter.py', 'env/config.json', 'train/run_verl.sh', 'jobs/train.sbatch']) {
        assert.ok(existsSync(path.join(dir, f)), `${t}: ${f} missing`);
      }
      JSON.parse(readFileSync(path.join(dir, 'env', 'config.json'), 'utf8'));

      const metrics = loadUserMetrics(dir);
      assert.deepEqual(metrics.problems, []);
      assert.ok(metrics.metrics.length >= 3, `${t}: ${metrics.metrics.length} metrics`);
      const known = new Set([...CATALOG.map((d) => d.name), ...metrics.metrics.map((m) => m.name)]);
      const rules = loadUserRules(dir, known);
      assert.deepEqual(rules.problems, []);
      assert.ok(rules.rules.length >= 3, `${t}: ${rules.rules.length} rules`);
      // every threshold in the manifest names a metric the engine knows
      for (const k of Object.keys(manifest.thresholds ?? {})) assert.ok(known.has(k), `${t}: threshold for unknown metric ${k}`);
      for (const f of ['train/run_verl.sh', 'jobs/train.sbatch']) {
        const r = spawnSync('bash', ['-n', path.join(dir, f)], { encoding: 'utf8' });
        assert.equal(r.status, 0, `${t}/${f}: ${r.stderr}`);
      }
    });
  }

  it('`evotrainer init --template` accepts each template from the command line', () => {
    for (const t of TEMPLATES) {
      const dir = path.join(base, 'cli', t);
      const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src', 'cli', 'main.ts'), 'init', '--template', t, dir], { cwd: repoRoot, encoding: 'utf8', env: process.env });
      assert.equal(r.status, 0, `${t}: ${r.stdout}\n${r.stderr}`);
      assert.ok(existsSync(path.join(dir, 'reward', 'compute_score.py')));
    }
    const bad = spawnSync(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src', 'cli', 'main.ts'), 'init', '--template', 'no-such', path.join(base, 'x')], { cwd: repoRoot, encoding: 'utf8' });
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /available: .*code.*math.*swe/);
  });
});

describe('math template', () => {
  const base = tempDir('evotrainer-template-math-');
  const dump = path.join(tempDir('evotrainer-math-dump-'), 'rollout_data');
  let dir: string;
  before(async () => {
    dir = await init('math', base);
  });

  it('passes its own Python tests: each answer notation with a near miss, math_verify when importable, the sympy timer, Python 3.9 syntax', () => {
    const { ran, names } = unittests(dir);
    assert.ok(ran >= 60, `ran ${ran}`);
    for (const t of ['test_fraction_spellings', 'test_mixed_numbers', 'test_left_right_and_spacing', 'test_units_and_text_wrappers', 'test_percent',
      'test_thousands_separators_with_decimals', 'test_intervals', 'test_sets_are_unordered_and_tuples_ordered', 'test_answer_lists_are_unordered',
      'test_inequalities_both_ways', 'test_var_prefixes', 'test_equations_up_to_a_constant_factor', 'test_matrices_and_vectors',
      'test_radicals_constants_and_trigonometry', 'test_adjacent_boxes_form_an_answer_list', 'test_math_verify_decides_when_importable',
      'test_sympy_runs_under_a_timeout', 'test_python_files_parse_as_python_3_9', 'test_hostile_responses_take_bounded_time']) {
      assert.equal(names.get(t), 'ok', `${t}: ${names.get(t) ?? 'did not run'}`);
    }
  });

  it('`evotrainer evolve` with no cluster profile says its Slurm training job needs one, before running anything', () => {
    const started = Date.now();
    const r = spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'evotrainer.js'), 'evolve', '--trust', '--rounds', '1'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 1, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /jobs\/train\.sbatch@[0-9a-f]{7} is a Slurm job \(it reads \$SLURM_JOB_NODELIST\); the local profile "local" would run it as a plain script/);
    assert.match(r.stderr, /Submit it through a Slurm cluster profile \(clusters: \{gpu: \{kind: slurm/);
    assert.doesNotMatch(`${r.stdout}${r.stderr}`, /unbound variable/);
    assert.ok(Date.now() - started < 60_000);
    // The job is on record as failed with the same next step, and nothing ran.
    const records = readdirSync(path.join(dir, '.evotrainer', 'jobs')).filter((f) => f.endsWith('.json'));
    const failed = records.map((f) => JSON.parse(readFileSync(path.join(dir, '.evotrainer', 'jobs', f), 'utf8')) as { state: string; failure: { nextStep: string } | null }).filter((j) => j.state === 'failed');
    assert.equal(failed.length, 1);
    assert.match(failed[0]!.failure!.nextStep, /Slurm cluster profile/);
  });

  it('reproduces every label of the GSM8K model solutions (100% agreement)', () => {
    const script = `
import json, sys
sys.path.insert(0, "reward")
from compute_score import compute_score
keys = ["6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"]
total = agree = no_answer = 0
dis = []
with open(sys.argv[1], encoding="utf-8") as f:
    for n, line in enumerate(f, 1):
        row = json.loads(line)
        for k in keys:
            total += 1
            s = compute_score("gsm8k", row[k]["solution"], row["ground_truth"])
            no_answer += int(s["no_answer"])
            if bool(s["acc"]) == bool(row[k]["is_correct"]):
                agree += 1
            else:
                dis.append({"line": n, "model": k, "label": row[k]["is_correct"], "pred": s["pred"], "truth_tail": row["ground_truth"][-40:]})
print(json.dumps({"total": total, "agree": agree, "no_answer": no_answer, "disagreements": dis}))
`;
    const r = python(dir, ['-c', script, gsm8kFile]);
    assert.equal(r.status, 0, r.stderr);
    const res = JSON.parse(r.stdout) as { total: number; agree: number; no_answer: number; disagreements: unknown[] };
    assert.equal(res.total, 3932);
    assert.deepEqual(res.disagreements, [], `disagreements with the labels:\n${JSON.stringify(res.disagreements, null, 1)}`);
    assert.equal(res.agree, res.total);
    // the real "no extractable answer" failure mode of this set is reported as its own component
    assert.ok(res.no_answer > 0 && res.no_answer < 50, `no_answer ${res.no_answer}`);
    console.log(`GSM8K label agreement: ${res.agree}/${res.total} (100%), no_answer ${res.no_answer}`);
  });

  it('reaches 0.85 balanced accuracy on the public answer-equivalence suites, with the standard library alone and with sympy', () => {
    const suites = ['public_grader_suites.json', 'hendrycks_math_equivalence.json'].map((f) => path.join(FIXTURES, 'math-equivalence', f));
    // "stdlib" hides sympy and math_verify from the grader, as on a machine without them
    const script = `
import json, sys
if sys.argv[1] == "stdlib":
    sys.modules["sympy"] = None
    sys.modules["math_verify"] = None
sys.path.insert(0, "reward")
from math_grader import is_equiv, verifier
cases = [c for f in sys.argv[2:] for c in json.load(open(f, encoding="utf-8"))["cases"]]
pos = [c for c in cases if c["equiv"]]
neg = [c for c in cases if not c["equiv"]]
tp = sum(1 for c in pos if is_equiv(c["a"], c["b"]))
tn = sum(1 for c in neg if not is_equiv(c["a"], c["b"]))
wrong = [[c["a"], c["b"], c["equiv"]] for c in cases if is_equiv(c["a"], c["b"]) != c["equiv"]]
print(json.dumps({"verifier": verifier(), "pos": len(pos), "neg": len(neg), "tp": tp, "tn": tn, "wrong": wrong}))
`;
    for (const mode of ['stdlib', 'sympy']) {
      const r = python(dir, ['-c', script, mode, ...suites]);
      assert.equal(r.status, 0, r.stderr);
      const res = JSON.parse(r.stdout) as { verifier: string; pos: number; neg: number; tp: number; tn: number; wrong: unknown[] };
      assert.equal(res.verifier, mode);
      assert.equal(res.pos + res.neg, 192);
      assert.equal(res.neg, 39);
      const balanced = (res.tp / res.pos + res.tn / res.neg) / 2;
      assert.ok(balanced >= 0.85, `${mode}: balanced accuracy ${balanced.toFixed(3)}; misjudged: ${JSON.stringify(res.wrong)}`);
      console.log(`public answer-equivalence suites (${res.pos + res.neg} cases), ${mode}: equivalent ${res.tp}/${res.pos}, not equivalent ${res.tn}/${res.neg}, balanced accuracy ${balanced.toFixed(3)}`);
    }
  });

  it('keeps its measured balanced accuracy on the KAS and nerdamer test suites (681 rows, 459 scored), with the standard library alone and with sympy', () => {
    // the harness's own measuring tool: out-of-scope rows are counted by reason, never scored
    const suite = path.join(FIXTURES, 'math-equivalence', 'cas_equivalence_suites.json');
    const floors = { stdlib: 0.957, sympy: 0.957 };  // the measured figures; one more miss in either class falls below
    for (const mode of ['stdlib', 'sympy'] as const) {
      const r = python(dir, ['tools/measure_equivalence.py', suite, '--mode', mode, '--json', '--misses']);
      assert.equal(r.status, 0, r.stderr);
      const res = JSON.parse(r.stdout) as { verifier: string; rows: number; pos: number; neg: number; tp: number; tn: number; balanced_accuracy: number; out_of_scope: Record<string, number>; wrong: unknown[] };
      assert.equal(res.verifier, mode);
      assert.equal(res.rows, 681);
      assert.deepEqual([res.pos, res.neg], [427, 32]);
      assert.equal(Object.values(res.out_of_scope).reduce((x, y) => x + y, 0), 222);
      assert.ok(res.balanced_accuracy >= floors[mode], `${mode}: balanced accuracy ${res.balanced_accuracy.toFixed(4)} < ${floors[mode]}; misjudged: ${JSON.stringify(res.wrong)}`);
      console.log(`KAS + nerdamer CAS suites (${res.pos + res.neg} scored of ${res.rows}), ${mode}: equivalent ${res.tp}/${res.pos}, not equivalent ${res.tn}/${res.neg}, balanced accuracy ${res.balanced_accuracy.toFixed(3)}`);
    }
  });

  it('its metrics and rules run in `evotrainer diagnose` over rollouts scored by its own reward', () => {
    // verl dumps of the GSM8K solutions re-scored by the template's reward, imported into a store
    mkdirSync(dump);
    const script = `
import json, os, sys
sys.path.insert(0, "reward")
from compute_score import compute_score
keys = ["6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"]
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")][:200]
for step in (1, 2, 3):
    with open(os.path.join(sys.argv[2], "%d.jsonl" % step), "w") as f:
        for row in rows[(step - 1) * 60:(step - 1) * 60 + 60]:
            for k in keys:
                s = compute_score("gsm8k", row[k]["solution"], row["ground_truth"])
                f.write(json.dumps(dict(s, input=row["question"], output=row[k]["solution"], gts=row["ground_truth"], step=step)) + "\\n")
`;
    const g = python(dir, ['-c', script, gsm8kFile, dump]);
    assert.equal(g.status, 0, g.stderr);
    const store = path.join(dir, '.evotrainer', 'store.duckdb');
    const cli = (args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src', 'cli', 'main.ts'), ...args, '--store', store], { cwd: repoRoot, encoding: 'utf8', env: process.env, timeout: 300_000 });
    let r = cli(['import', dump, '--format', 'verl', '--run', 'gsm8k', '--split', 'train']);
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    // --trust: the template's script metric (non_numeric_answer_share.py) is harness code
    r = cli(['health', '--run', 'gsm8k', '--json', '--harness', dir, '--trust']);
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    const health = JSON.parse(r.stdout) as { rollouts: number; metrics: { name: string; value: number | null; status: string }[]; problems: unknown[] };
    assert.equal(health.rollouts, 720);
    assert.deepEqual(health.problems, []);
    const value = (name: string) => {
      const m = health.metrics.find((x) => x.name === name);
      assert.ok(m, `${name} not in the health report`);
      return m.value;
    };
    // the reward is pure correctness by default: wrong answers earn nothing, nothing is shaping
    assert.equal(value('wrong_answer_reward'), 0);
    assert.equal(value('shaped_reward_gap'), 0);
    // a few of these 720 solutions never reach a final answer
    const noAnswer = value('no_final_answer_share');
    assert.ok(noAnswer !== null && noAnswer >= 0 && noAnswer < 0.05, `no_final_answer_share ${noAnswer}`);
    assert.ok(typeof value('non_numeric_answer_share') === 'number');
    r = cli(['diagnose', '--run', 'gsm8k', '--json', '--harness', dir, '--trust']);
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    const diag = JSON.parse(r.stdout) as { problems: unknown[]; findings: { rule: string }[] };
    assert.deepEqual(diag.problems, []);
    // half the GSM8K groups are all-right or all-wrong: the built-in R1 fires, none of the template's rules misfire
    assert.ok(diag.findings.some((f) => f.rule === 'R1'));
    assert.ok(!diag.findings.some((f) => f.rule.startsWith('math-')), JSON.stringify(diag.findings.map((f) => f.rule)));
  });
});

describe('code template', () => {
  const base = tempDir('evotrainer-template-code-');
  let dir: string;
  before(async () => {
    dir = await init('code', base);
  });

  it('passes its own Python tests: every verdict, and no credit for raising, exiting early, printing nothing or tampering', () => {
    const { ran, names } = unittests(dir);
    assert.ok(ran >= 30, `ran ${ran}`);
    for (const t of ['test_accepted', 'test_wrong_answer_with_partial_credit', 'test_compile_error', 'test_runtime_error', 'test_time_limit', 'test_memory_limit',
      'test_exits_early_before_printing', 'test_prints_nothing', 'test_raises_after_printing_the_right_answer',
      'test_writes_into_the_checkers_folder', 'test_overwrites_the_reward_module', 'test_monkeypatches_then_writes', 'test_disarms_the_audit_hook',
      'test_reads_the_expected_outputs_from_disk', 'test_kills_the_parent', 'test_starts_processes', 'test_network', 'test_native_code',
      'test_plants_a_module_in_the_interpreters_library', 'test_changes_folder_out_of_the_sandbox', 'test_reads_metadata_outside_the_sandbox',
      'test_catching_the_cpu_limit_signal_is_still_a_time_limit', 'test_tolerance_never_applies_to_integers', 'test_tolerance_never_passes_nan_or_infinity',
      'test_expected_outputs_through_proc', 'test_expected_outputs_through_inherited_descriptors', 'test_the_program_sees_none_of_the_checkers_environment',
      'test_shared_temporary_files', 'test_native_code_and_signal_handlers', 'test_printing_to_stderr_earns_nothing', 'test_shadowing_the_checkers_modules',
      'test_timing_the_checker']) {
      assert.equal(names.get(t), 'ok', `${t}: ${names.get(t) ?? 'did not run'}`);
    }
  });

  it('holds without namespaces too (the fallback where unshare is not permitted)', () => {
    const iso = python(dir, ['reward/compute_score.py']);
    assert.equal(iso.status, 0, iso.stderr);
    const info = JSON.parse(iso.stdout) as { network: boolean; unshare: string | null; user: string; read_only_root: boolean };
    console.log(`code sandbox isolation on this machine: ${JSON.stringify(info)}`);
    // where this machine allows a mount namespace (CI runs as root), the candidate gets a read-only root
    const mountNs = spawnSync('unshare', ['--mount', 'true']).status === 0 || spawnSync('unshare', ['--user', '--map-root-user', '--mount', 'true']).status === 0;
    assert.equal(info.read_only_root, mountNs, `read_only_root ${info.read_only_root}, but unshare --mount ${mountNs ? 'works' : 'does not work'} here`);
    const { ran } = unittests(dir, { EVOTRAINER_SANDBOX_UNSHARE: '0' });
    assert.ok(ran >= 30);
  });
});

describe('swe template', () => {
  const base = tempDir('evotrainer-template-swe-');
  let dir: string;
  before(async () => {
    dir = await init('swe', base);
  });

  it('judges a repository built in the test: correct fix, wrong fix, a patch that does not apply, deleted, renamed or skipped failing tests, conftest and test-config plugins, interpreter startup files, runner or standard-library shadowing, printed passes, framework patching; scrub leaves no history', () => {
    // the exploit tests run the real pytest too
    const pytest = python(dir, ['-m', 'pytest', '--version']);
    assert.equal(pytest.status, 0, `python3 -m pytest is missing (${pytest.stderr.trim()}): install pytest (Debian: apt-get install python3-pytest)`);
    const { ran, names } = unittests(dir);
    assert.ok(ran >= 15, `ran ${ran}`);
    for (const t of ['test_correct_fix_resolves', 'test_wrong_fix_does_not', 'test_patch_that_does_not_apply', 'test_patch_deleting_the_failing_test_earns_nothing',
      'test_patch_skipping_the_failing_test_earns_nothing', 'test_correct_fix_plus_test_edits_earns_nothing', 'test_patching_the_test_framework_earns_nothing',
      'test_compute_score_and_report_file', 'test_scrubbed_workspace_has_no_history', 'test_unscrubbed_workspace_leaks_the_fix',
      'test_correct_fix_resolves_under_pytest', 'test_a_module_shadowing_the_test_runner_earns_nothing', 'test_printing_passing_lines_earns_nothing',
      'test_patching_the_framework_out_of_sight_earns_nothing', 'test_a_plugin_added_to_the_test_configuration_earns_nothing', 'test_test_paths_and_test_configuration',
      'test_the_patched_code_sees_none_of_the_trainers_secrets', 'test_a_conftest_passing_every_test_earns_nothing', 'test_interpreter_startup_files_earn_nothing',
      'test_deleting_or_renaming_the_failing_tests_earns_nothing', 'test_a_module_shadowing_the_standard_library_earns_nothing']) {
      assert.equal(names.get(t), 'ok', `${t}: ${names.get(t) ?? 'did not run'}`);
    }
    const cfg = JSON.parse(readFileSync(path.join(dir, 'env', 'config.json'), 'utf8')) as { environment: { scrub_git_history: boolean } };
    assert.equal(cfg.environment.scrub_git_history, true, 'scrub_git_history must be on by default');
  });
});

describe('jobs/train.sbatch (Slurm and Ray stand-ins: no cluster or GPU here)', () => {
  const base = tempDir('evotrainer-template-jobs-');
  for (const t of TEMPLATES) {
    it(`${t}: Ray head on the first node, a worker on each other node, the trainer once on the head with this harness's reward`, async () => {
      const dir = await init(t, path.join(base, t));
      const bin = path.join(base, `standins-${t}`);
      mkdirSync(bin);
      for (const f of readdirSync(path.join(FIXTURES, 'slurm-standins'))) {
        copyFileSync(path.join(FIXTURES, 'slurm-standins', f), path.join(bin, f));
        chmodSync(path.join(bin, f), 0o755);
      }
      const log = path.join(bin, 'calls.log');
      const realPython = spawnSync('sh', ['-c', 'command -v python3'], { encoding: 'utf8' }).stdout.trim();
      const r = spawnSync('bash', [path.join(dir, 'jobs', 'train.sbatch')], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 60_000,
        env: {
          ...process.env,
          PATH: `${bin}:${process.env.PATH}`,
          STANDIN_LOG: log,
          STANDIN_REAL_PYTHON: realPython,
          STANDIN_NODES: 'node-a node-b node-c',
          SLURM_JOB_NODELIST: 'node-[a-c]',
          SLURM_JOB_NUM_NODES: '3',
          SLURM_NNODES: '3',
          SLURM_GPUS_PER_NODE: 'h100:8',
          SLURM_CPUS_PER_TASK: '32',
          SLURM_SUBMIT_DIR: dir,
          RAY_HEAD_WAIT: '0',
          RAY_WORKER_WAIT: '0',
          TOOL_CONFIG: path.join(dir, 'train', 'tools.yaml'),
          RUN_NAME: 'standin-run',
        },
      });
      assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
      const calls = readFileSync(log, 'utf8');
      assert.match(r.stdout, /using the IPv4 address 10\.1\.2\.3/);
      assert.match(calls, /^ray start --head --node-ip-address=10\.1\.2\.3 --port=6379 --num-cpus 32 --num-gpus 8 --block$/m);
      assert.match(calls, /^srun --nodes=1 --ntasks=1 -w=node-b :: bash -c/m);
      assert.match(calls, /^srun --nodes=1 --ntasks=1 -w=node-c :: bash -c/m);
      assert.equal(calls.match(/^ray start --address 10\.1\.2\.3:6379 --num-cpus 32 --num-gpus 8 --block$/gm)?.length, 2);
      assert.match(calls, /^srun --overlap --nodes=1 --ntasks=1 -w=node-a :: bash -c/m);
      const verl = calls.split('\n').filter((l) => l.startsWith('verl '));
      assert.equal(verl.length, 1, calls);
      const args = verl[0]!;
      assert.ok(args.startsWith('verl verl.trainer.main_ppo '), args);
      assert.ok(args.includes(`custom_reward_function.path=${path.join(dir, 'reward', 'compute_score.py')}`), args);
      assert.ok(args.includes('custom_reward_function.name=compute_score'));
      assert.ok(args.includes('algorithm.adv_estimator=grpo'));
      assert.ok(args.includes('trainer.nnodes=3') && args.includes('trainer.n_gpus_per_node=8'), args);
      assert.ok(args.includes('actor_rollout_ref.rollout.n=8'), args);
      assert.ok(args.includes(`trainer.rollout_data_dir=${path.join(dir, 'outputs', 'standin-run', 'rollout_data')}`), args);
      assert.match(calls, /^env RAY_ADDRESS=10\.1\.2\.3:6379$/m);
    });
  }
});
