"""GRPO trainer core (frozen): a softmax policy over tool actions, sampled groups,
group-normalized advantages, policy-gradient updates, verl-format dumps.

Pure python3 standard library. Deterministic given a seed: every random draw comes
from a `random.Random` seeded by (seed, phase, step, task, sample).

The environment module supplies the domain: `ACTIONS`, `N_FEATURES`, `prior()`,
`reset(task, config)`, `features(state)`, `step(state, action, rng) -> (command,
thought, observation, returncode, done)`, `prompt(task)`, `outcome(state)` and
`ground_truth(task)`. The harness supplies the reward (`reward/compute_score.py`) and the
filters (`filters/group_filter.py`), imported from the harness tree the job runs in.
"""

import hashlib
import importlib.util
import json
import math
import os
import random
import sys
import time

SYSTEM = "You are a helpful assistant that solves tasks by running one shell command per turn."


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path}: cannot be imported as a python module")
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except FileNotFoundError as e:
        raise SystemExit(f"{path}: cannot be imported: {e.filename} is missing; restore it from the template")
    except Exception as e:  # the harness file is user-edited: say where it broke
        raise SystemExit(f"{path}: cannot be imported ({type(e).__name__}: {e}); fix the file and rerun")
    return mod


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise SystemExit(f"{path}: missing (the harness needs it; restore it from the template)")
    except json.JSONDecodeError as e:
        raise SystemExit(f"{path}:{e.lineno}:{e.colno}: not valid JSON ({e.msg}); fix the file and rerun")


def read_jsonl(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise SystemExit(f"{path}:{i}: not valid JSON ({e.msg})")
    return rows


def rng_for(seed, *parts):
    h = hashlib.sha256(repr((seed,) + parts).encode()).digest()
    return random.Random(int.from_bytes(h[:8], "big"))


class Policy:
    """Linear softmax policy: logits[a] = W[a] . phi(state)."""

    def __init__(self, weights):
        self.w = [list(row) for row in weights]

    def probs(self, phi, temperature=1.0):
        logits = []
        for row in self.w:
            s = 0.0
            for x, f in zip(row, phi):
                if f:
                    s += x * f
            logits.append(s / temperature)
        m = max(logits)
        e = [math.exp(z - m) for z in logits]
        t = sum(e)
        return [v / t for v in e]


def entropy(p):
    return -sum(q * math.log(q) for q in p if q > 0)


def log_step(step, metrics):
    """One line per step, as verl's console logger prints it (concat_dict_to_str):
    `step:N - key:value - ...`. The job log carries it; `evotrainer import` reads it."""
    print(" - ".join([f"step:{step}"] + [f"{k}:{v:.3f}" for k, v in metrics.items()]), flush=True)


def sample_index(p, rng):
    u = rng.random()
    acc = 0.0
    for i, v in enumerate(p):
        acc += v
        if u < acc:
            return i
    return len(p) - 1


def run_episode(env, policy, task, env_config, rng, temperature=1.0):
    """One multi-turn episode. Returns the trajectory (features, action, probs per turn),
    the transcript turns and the environment outcome."""
    state = env.reset(task, env_config)
    traj = []
    turns = []
    while True:
        phi = env.features(state)
        p = policy.probs(phi, temperature)
        a = sample_index(p, rng)
        traj.append((phi, a, p))
        command, thought, observation, rc, done = env.step(state, env.ACTIONS[a], rng)
        turns.append((thought, command, observation, rc))
        if done:
            break
    return traj, turns, env.outcome(state)


def render(env, task, turns):
    """The prompt and the response as verl's multi-turn rollout decodes them (Qwen chat template)."""
    prompt = (
        f"<|im_start|>system\n{SYSTEM}<|im_end|>\n"
        f"<|im_start|>user\n{env.prompt(task)}<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    parts = []
    for i, (thought, command, observation, rc) in enumerate(turns):
        head = "" if i == 0 else "<|im_start|>assistant\n"
        parts.append(f"{head}{thought}\n\n```bash\n{command}\n```<|im_end|>\n")
        if observation is not None:
            parts.append(
                "<|im_start|>user\n<tool_response>\n"
                f"<returncode>{rc}</returncode>\n<output>\n{observation}</output>\n"
                "</tool_response><|im_end|>\n"
            )
    return prompt, "".join(parts)


class Trainer:
    def __init__(self, harness, env, out, seed):
        self.harness = harness
        self.env = env
        self.out = out
        self.seed = seed
        self.train_cfg = read_json(os.path.join(harness, "train", "config.json"))
        self.env_cfg = read_json(os.path.join(harness, "env", "config.json"))
        self.reward = load_module(os.path.join(harness, "reward", "compute_score.py"), "harness_reward")
        self.filters = load_module(os.path.join(harness, "filters", "group_filter.py"), "harness_filters")
        for mod, names, where in ((self.reward, ["compute_score"], "reward/compute_score.py"), (self.filters, ["keep_group", "keep_trajectory"], "filters/group_filter.py")):
            for n in names:
                if not callable(getattr(mod, n, None)):
                    raise SystemExit(f"{os.path.join(harness, where)}: must define {n}()")
        self.train_tasks = read_jsonl(os.path.join(harness, "data", "train.jsonl"))
        self.eval_tasks = read_jsonl(os.path.join(harness, "data", "eval.jsonl"))
        self.policy = Policy(env.prior())
        limit = self.env_cfg.get("step_limit", 10) if isinstance(self.env_cfg, dict) else None
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise SystemExit(f"{os.path.join(harness, 'env', 'config.json')}: \"step_limit\" must be a positive integer, found {json.dumps(limit)}")

    def cfg(self, key, default):
        v = self.train_cfg.get(key, default)
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
            raise SystemExit(f"{os.path.join(self.harness, 'train', 'config.json')}: \"{key}\" must be a non-negative number, found {json.dumps(v)}")
        return v

    def score(self, task, response, outcome, data_source):
        extra = dict(outcome)
        extra["step_limit"] = self.env_cfg.get("step_limit")
        r = self.reward.compute_score(data_source, response, self.env.ground_truth(task), extra)
        if isinstance(r, (int, float)):
            r = {"score": float(r)}
        if not isinstance(r, dict) or not isinstance(r.get("score"), (int, float)):
            raise SystemExit("reward/compute_score.py: compute_score must return a number or a dict with a numeric 'score'")
        return r

    def rollout(self, task, env_cfg, rng, step, data_source, temperature=1.0):
        traj, turns, outcome = run_episode(self.env, self.policy, task, env_cfg, rng, temperature)
        prompt, response = render(self.env, task, turns)
        r = self.score(task, response, outcome, data_source)
        row = {"input": prompt, "output": response, "gts": self.env.ground_truth(task), "score": float(r["score"]), "step": step, "data_source": data_source}
        for k, v in r.items():
            if k != "score" and isinstance(v, (int, float, bool)):
                row[k] = v
        rollout = {
            "id": f"{task['id']}#{step}",
            "prompt": prompt,
            "response": response,
            "ground_truth": row["gts"],
            "data_source": data_source,
            "score": row["score"],
            "acc": float(r.get("acc", outcome.get("resolved", 0))),
            "turns": len(turns),
            "extra_info": outcome,
        }
        return row, rollout, traj

    def train(self):
        cfg = self.cfg
        steps = int(cfg("steps", 30))
        batch = int(cfg("batch_tasks", 16))
        group = int(cfg("group_size", 8))
        lr = float(cfg("lr", 0.5))
        ent = float(cfg("entropy_coef", 0.0))
        max_batches = int(cfg("max_sample_batches", 3))
        dump_every = max(1, int(cfg("dump_every", 1)))
        eps = 1e-6
        domain = self.env.DOMAIN
        os.makedirs(os.path.join(self.out, "rollout_data"), exist_ok=True)
        history = []
        order_rng = rng_for(self.seed, "order")
        pool = list(range(len(self.train_tasks)))
        order_rng.shuffle(pool)
        cursor = 0
        for step in range(1, steps + 1):
            kept_groups = []
            dumped = []
            sampled = []
            sampled_groups = 0
            dead = 0
            for attempt in range(max_batches):
                need = batch - len(kept_groups)
                if need <= 0:
                    break
                for _ in range(need):
                    task = self.train_tasks[pool[cursor % len(pool)]]
                    cursor += 1
                    rows, rollouts, trajs = [], [], []
                    for g in range(group):
                        rng = rng_for(self.seed, "train", step, task["id"], attempt, g)
                        row, ro, tr = self.rollout(task, self.env_cfg, rng, step, domain)
                        ro["id"] = f"{task['id']}#s{step}a{attempt}g{g}"
                        rows.append(row)
                        rollouts.append(ro)
                        trajs.append(tr)
                        sampled.append((ro, tr))
                    dumped.extend(rows)
                    sampled_groups += 1
                    scores = [ro["score"] for ro in rollouts]
                    if max(scores) - min(scores) < 1e-12:
                        dead += 1
                    if not self.filters.keep_group(rollouts):
                        continue
                    kept_groups.append((rollouts, trajs))
            # group-normalized advantages; trajectory filter drops rollouts from the loss
            grad = [[0.0] * len(self.policy.w[0]) for _ in self.policy.w]
            n_seq = 0
            for rollouts, trajs in kept_groups:
                scores = [ro["score"] for ro in rollouts]
                mean = sum(scores) / len(scores)
                std = math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))
                for ro, tr in zip(rollouts, trajs):
                    if not self.filters.keep_trajectory(ro):
                        continue
                    n_seq += 1
                    adv = (ro["score"] - mean) / (std + eps)
                    for phi, a, p in tr:
                        for j, pj in enumerate(p):
                            coef = adv * ((1.0 if j == a else 0.0) - pj)
                            if ent:
                                # gradient of the entropy bonus w.r.t. logit j: -p_j (log p_j + H)
                                h = -sum(q * math.log(q) for q in p if q > 0)
                                coef += ent * (-pj * (math.log(pj) + h) if pj > 0 else 0.0)
                            if coef:
                                row = grad[j]
                                for k, f in enumerate(phi):
                                    if f:
                                        row[k] += coef * f
            grad_norm = math.sqrt(sum(g * g for row in grad for g in row)) / n_seq if n_seq else 0.0
            if n_seq:
                for j, row in enumerate(grad):
                    w = self.policy.w[j]
                    for k, g in enumerate(row):
                        w[k] += lr * g / n_seq
            if step % dump_every == 0 or step == steps:
                with open(os.path.join(self.out, "rollout_data", f"{step}.jsonl"), "w", encoding="utf-8") as f:
                    for row in dumped:
                        f.write(json.dumps(row) + "\n")
            accs = [r.get("acc", 0) for r in dumped]
            infos = [ro["extra_info"] for ro, _ in sampled]
            # Model state as verl logs it: mean entropy of the sampled action distributions
            # (the policy's per-token entropy here), the update's gradient norm, the scores.
            dists = [p for _, tr in sampled for _, _, p in tr]
            scores = [r["score"] for r in dumped]
            log_step(step, {
                "actor/entropy": sum(entropy(p) for p in dists) / len(dists),
                "actor/grad_norm": grad_norm,
                "actor/lr": lr,
                "critic/score/mean": sum(scores) / len(scores),
                "critic/score/max": max(scores),
                "critic/score/min": min(scores),
                "critic/acc/mean": sum(accs) / len(accs),
            })
            history.append({
                "step": step,
                "sampled_groups": sampled_groups,
                "kept_groups": len(kept_groups),
                "dead_group_ratio": dead / sampled_groups if sampled_groups else 0.0,
                "score_mean": sum(r["score"] for r in dumped) / len(dumped),
                "acc_mean": sum(accs) / len(accs),
                "mean_turns": sum(i.get("turns", 0) for i in infos) / len(infos),
                "leak_share": sum(1 for i in infos if i.get("leaked")) / len(infos),
                "abandonment_rate": sum(1 for i in infos if i.get("turns", 0) <= 2) / len(infos),
            })
        return history

    def evaluate(self):
        """Final eval on the pinned eval set: once in the environment as configured (raw),
        once with history scrubbed (honest, data_source `<domain>-honest`)."""
        k = int(self.cfg("eval_samples", 4))
        temperature = float(self.cfg("eval_temperature", 1.0))
        steps = int(self.cfg("steps", 30))
        domain = self.env.DOMAIN
        os.makedirs(os.path.join(self.out, "validation_data"), exist_ok=True)
        honest_cfg = dict(self.env_cfg)
        honest_cfg.update(getattr(self.env, "HONEST_OVERRIDES", {}))
        rows = []
        per_task = {"raw": {}, "honest": {}}
        stats = {"raw": [], "honest": []}
        for label, env_cfg, source in (("raw", self.env_cfg, domain), ("honest", honest_cfg, f"{domain}-honest")):
            for task in self.eval_tasks:
                acc = 0.0
                for s in range(k):
                    rng = rng_for(self.seed, "eval", task["id"], s)
                    row, ro, _ = self.rollout(task, env_cfg, rng, steps, source, temperature)
                    rows.append(row)
                    acc += ro["acc"]
                    stats[label].append(ro)
                per_task[label][task["id"]] = acc / k
        with open(os.path.join(self.out, "validation_data", f"{steps}.jsonl"), "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
        return per_task, stats


def behavior(rollouts):
    n = len(rollouts) or 1
    turns = [ro["turns"] for ro in rollouts]
    info = [ro["extra_info"] for ro in rollouts]
    return {
        "pass_rate": sum(ro["acc"] for ro in rollouts) / n,
        "leak_share": sum(1 for i in info if i.get("leaked")) / n,
        "history_share": sum(1 for i in info if i.get("history_calls", 0) > 0) / n,
        "mean_turns": sum(turns) / n,
        "abandonment_rate": sum(1 for t in turns if t <= 2) / n,
        "step_limit_rate": sum(1 for i in info if i.get("hit_step_limit")) / n,
        "mean_max_same_tool": sum(i.get("max_same_tool", 0) for i in info) / n,
        "echo_rate": sum(1 for i in info if i.get("max_same_tool", 0) >= 4) / n,
    }


def main(env, argv=None):
    import argparse

    ap = argparse.ArgumentParser(description=f"GRPO training on {env.DOMAIN} (verl dump format)")
    ap.add_argument("--out", default=os.environ.get("EVOTRAINER_OUT"), help="output folder (default $EVOTRAINER_OUT)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--harness", default=os.path.dirname(os.path.dirname(os.path.abspath(sys.argv[0]))), help="harness root (default: the folder above train/)")
    ap.add_argument("--steps", type=int, default=None, help="override train/config.json steps (short smoke runs)")
    ap.add_argument("--eval-limit", type=int, default=None, help="evaluate only the first N eval tasks (smoke runs)")
    args = ap.parse_args(argv)
    if not args.out:
        raise SystemExit("no output folder: pass --out DIR or set EVOTRAINER_OUT")
    t0 = time.time()
    os.makedirs(args.out, exist_ok=True)
    tr = Trainer(os.path.abspath(args.harness), env, args.out, args.seed)
    if args.steps is not None:
        tr.train_cfg["steps"] = args.steps
    if args.eval_limit is not None:
        tr.eval_tasks = tr.eval_tasks[: args.eval_limit]
    history = tr.train()
    per_task, stats = tr.evaluate()
    raw, honest = behavior(stats["raw"]), behavior(stats["honest"])
    metrics = {
        "domain": env.DOMAIN,
        "seed": args.seed,
        "pass_rate": raw["pass_rate"],
        "honest_pass_rate": honest["pass_rate"],
        "leak_share": raw["leak_share"],
        "raw": raw,
        "honest": honest,
        "dead_group_ratio": [h["dead_group_ratio"] for h in history],
        "train": history,
        "per_task": per_task,
        "policy": tr.policy.w,
        "wall_time_s": round(time.time() - t0, 3),
    }
    with open(os.path.join(args.out, "metrics.json"), "w", encoding="utf-8") as f:
        json.dump(metrics, f, indent=1)
    print(json.dumps({k: metrics[k] for k in ("domain", "pass_rate", "honest_pass_rate", "leak_share", "wall_time_s")}))
    return metrics
