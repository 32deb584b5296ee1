"""Runs the baseline and single-factor interventions of this harness from real training
(each a one-key change of a harness file, on a copy of its parent version) and prints
raw score, honest score, leak share, mean dead-group ratio (all steps, first 10 steps),
turns, abandonment and echo rates, with a paired bootstrap interval (over eval tasks) of
each variant's honest score against its parent's.

    python3 scenario.py [--seed 0] [--keep DIR] [--only a,b] [--check]

`--check` also checks the dynamics the template must show and exits 1 when one fails.
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# (name, parent, file, dotted key, value): one key each, as an intervention commit changes
# it on a branch from its parent version
VARIANTS = {
    "toy-swe": [
        ("baseline", None, None, None, None),
        ("efficiency-bonus", "baseline", "reward/config.json", "weights.efficiency", 1.0),
        ("localization-credit", "baseline", "reward/config.json", "weights.localization", 0.3),
        ("test-run-bonus", "baseline", "reward/config.json", "weights.test_runs", 0.5),
        ("zero-variance-filter", "baseline", "filters/config.json", "drop_zero_variance_groups", True),
        ("scrub-history", "baseline", "env/config.json", "scrub_git_history", True),
        ("scrub+localization", "scrub-history", "reward/config.json", "weights.localization", 0.3),
        ("scrub+zero-variance", "scrub-history", "filters/config.json", "drop_zero_variance_groups", True),
    ],
    "toy-math": [
        ("baseline", None, None, None, None),
        ("efficiency-bonus", "baseline", "reward/config.json", "weights.efficiency", 0.5),
        ("progress-credit", "baseline", "reward/config.json", "weights.progress", 0.3),
        ("zero-variance-filter", "baseline", "filters/config.json", "drop_zero_variance_groups", True),
    ],
}


def set_key(path, dotted, value):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    node = doc
    keys = dotted.split(".")
    for k in keys[:-1]:
        node = node.setdefault(k, {})
    node[keys[-1]] = value
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


def paired_bootstrap(a, b, n=2000, seed=0):
    """95% interval of mean(b - a) over tasks, resampling tasks."""
    ids = sorted(a)
    d = [b[i] - a[i] for i in ids]
    r = random.Random(seed)
    means = sorted(sum(d[r.randrange(len(d))] for _ in d) / len(d) for _ in range(n))
    return sum(d) / len(d), means[int(0.025 * n)], means[int(0.975 * n) - 1]


def run_variant(harness, work, name, parent, file, key, value, seed, base_sets=()):
    tree = os.path.join(work, name)
    src = os.path.join(work, parent) if parent else harness
    shutil.copytree(src, tree, ignore=shutil.ignore_patterns(".git", ".evotrainer", "__pycache__", "runs"))
    if not parent:
        for spec in base_sets:
            f, kv = spec.split(":", 1)
            k, v = kv.split("=", 1)
            set_key(os.path.join(tree, f), k, json.loads(v))
    if file:
        set_key(os.path.join(tree, file), key, value)
    out = os.path.join(tree, "runs", f"seed{seed}")
    subprocess.run([sys.executable, os.path.join(tree, "train", "train.py"), "--out", out, "--seed", str(seed)], check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "metrics.json"), encoding="utf-8") as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--harness", default=HERE)
    ap.add_argument("--keep", default=None, help="keep the variant trees and runs in this folder")
    ap.add_argument("--only", default=None, help="comma-separated variant names")
    ap.add_argument("--check", action="store_true", help="check the dynamics the harness must show; exit 1 when one fails")
    ap.add_argument("--set", action="append", default=[], metavar="FILE:KEY=JSON", help="change the baseline itself, e.g. train/config.json:lr=0.3")
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(args.harness, "train"))
    domain = "toy-math" if os.path.exists(os.path.join(args.harness, "train", "toy_calc.py")) else "toy-swe"
    work = args.keep or tempfile.mkdtemp(prefix="scenario-")
    os.makedirs(work, exist_ok=True)
    variants = [v for v in VARIANTS[domain] if not args.only or v[0] == "baseline" or v[0] in args.only.split(",")]
    results = {}
    for name, parent, file, key, value in variants:
        results[name] = run_variant(args.harness, work, name, parent, file, key, value, args.seed, args.set)
    base = results["baseline"]
    print(f"{domain} seed {args.seed}: {len(base['per_task']['honest'])} eval tasks x samples")
    print(f"{'variant':22} {'raw':>6} {'honest':>6} {'leak':>6} {'dead':>6} {'dead0':>6} {'turns':>6} {'aband':>6} {'echo':>6} {'time':>5}  honest vs parent [95% paired bootstrap]")
    parents = {v[0]: v[1] for v in variants}
    for name, m in results.items():
        dead = m["dead_group_ratio"]
        verdict = ""
        if parents[name]:
            d, lo, hi = paired_bootstrap(results[parents[name]]["per_task"]["honest"], m["per_task"]["honest"])
            verdict = f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}] vs {parents[name]}" + (" UP" if lo > 0 else " DOWN" if hi < 0 else "")
        print(f"{name:22} {m['pass_rate']:6.3f} {m['honest_pass_rate']:6.3f} {m['leak_share']:6.3f} {sum(dead) / len(dead):6.3f} {sum(dead[:10]) / len(dead[:10]):6.3f} {m['raw']['mean_turns']:6.2f} {m['raw']['abandonment_rate']:6.3f} {m['raw']['echo_rate']:6.3f} {m['wall_time_s']:5.1f}  {verdict}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    if args.check:
        failed = 0
        for claim, ok in checks(domain, results, parents):
            print(f"{'PASS' if ok else 'FAIL'}  {claim}")
            failed += not ok
        sys.exit(1 if failed else 0)


def checks(domain, results, parents):
    """The dynamics each template must show from real training."""
    def up(name, parent):
        _, lo, _ = paired_bootstrap(results[parent]["per_task"]["honest"], results[name]["per_task"]["honest"])
        return lo > 0
    out = []
    if domain == "toy-swe":
        raw = {n: m["pass_rate"] for n, m in results.items()}
        top = max(raw, key=raw.get)
        out.append((f"efficiency-bonus reaches the highest raw score (top: {top} {raw[top]:.3f})", top == "efficiency-bonus"))
        out.append(("efficiency-bonus exploits the leak: leak share up by > 0.3 over the baseline", results["efficiency-bonus"]["leak_share"] > results["baseline"]["leak_share"] + 0.3))
        out.append(("efficiency-bonus loses honest score against the baseline", results["efficiency-bonus"]["honest_pass_rate"] < results["baseline"]["honest_pass_rate"]))
        s = results["scrub-history"]
        out.append(("scrub-history closes the leak: leak share 0, raw = honest", s["leak_share"] == 0 and abs(s["pass_rate"] - s["honest_pass_rate"]) < 1e-9))
        out.append(("scrub+zero-variance raises the honest score over its parent beyond the paired bootstrap interval", up("scrub+zero-variance", "scrub-history")))
        out.append(("scrub+zero-variance raises the honest score over the baseline beyond the paired bootstrap interval", up("scrub+zero-variance", "baseline")))
    else:
        out.append(("zero-variance-filter raises the honest score over the baseline beyond the paired bootstrap interval", up("zero-variance-filter", "baseline")))
    return out


if __name__ == "__main__":
    main()
