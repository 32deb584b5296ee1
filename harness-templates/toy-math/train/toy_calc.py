"""toy-math environment (frozen): multi-step arithmetic with a calculator tool.

A task is a chain of operations on a starting number ("start with 37, multiply by 24, add
518, ..."). Tools, each rendered as the shell command an agent would run:
  mental   echo "37 * 24 = 888" (the next step computed in the head: may be wrong,
           more often for big multiplications)
  calc     python3 -c "print(37 * 24)" (the next step with the calculator: exact)
  check    python3 -c "print(((37 * 24) + 518))" (recomputes the chain so far: repairs errors)
  reread   cat problem.txt (no progress)
  submit   submit (the answer is the running value)
Settings come from env/config.json: `step_limit`.
"""

DOMAIN = "toy-math"
ACTIONS = ["mental", "calc", "check", "reread", "submit"]
HONEST_OVERRIDES = {}

F_BIAS, F_NONE, F_SOME, F_ALL, F_HARD, F_ERRSEEN, F_CHECKED = range(7)
F_LAST = 7  # 7..11: last action one-hot
F_LATE, F_START = 12, 13
N_FEATURES = 14

_PRIOR = {
    "mental": {F_BIAS: 0.8, F_ALL: -1.5},
    "calc": {F_BIAS: -1.0, F_ALL: -1.5},
    "check": {F_BIAS: -1.5, F_ALL: 0.3},
    "reread": {F_BIAS: -1.0, F_START: 0.8},
    "submit": {F_BIAS: -2.0, F_ALL: 2.2},
}


def prior():
    rows = []
    for a in ACTIONS:
        row = [0.0] * N_FEATURES
        for k, v in _PRIOR[a].items():
            row[k] = v
        rows.append(row)
    return rows


def _describe(op, b):
    return {"+": f"add {b}", "-": f"subtract {b}", "*": f"multiply by {b}"}[op]


def prompt(task):
    steps = ", ".join(_describe(op, b) for op, b in task["ops"])
    return f"Start with {task['start']}, then {steps}. What is the result? Run one command per turn; `submit` when done."


def ground_truth(task):
    return str(task["answer"])


def _apply(x, op, b):
    return x + b if op == "+" else x - b if op == "-" else x * b


def reset(task, config):
    return {"task": task, "limit": int(config.get("step_limit", 12)), "t": 0, "done_ops": 0, "value": task["start"], "true": task["start"],
            "err": False, "errseen": False, "checked": False, "last": None, "submitted": False, "done": False,
            "correct_steps": 0, "streak": 0, "max_streak": 0, "calc_calls": 0}


def features(s):
    task = s["task"]
    n = len(task["ops"])
    phi = [0.0] * N_FEATURES
    phi[F_BIAS] = 1.0
    if s["done_ops"] == 0:
        phi[F_NONE] = 1.0
    elif s["done_ops"] < n:
        phi[F_SOME] = 1.0
    else:
        phi[F_ALL] = 1.0
    if s["done_ops"] < n and task["ops"][s["done_ops"]][0] == "*":
        phi[F_HARD] = 1.0
    if s["errseen"]:
        phi[F_ERRSEEN] = 1.0
    if s["checked"]:
        phi[F_CHECKED] = 1.0
    if s["last"] is not None:
        phi[F_LAST + ACTIONS.index(s["last"])] = 1.0
    if s["t"] * 2 >= s["limit"]:
        phi[F_LATE] = 1.0
    if s["t"] == 0:
        phi[F_START] = 1.0
    return phi


def _expr(task, k):
    e = str(task["start"])
    for op, b in task["ops"][:k]:
        e = f"({e} {op} {b})"
    return e


def step(s, action, rng):
    task = s["task"]
    n = len(task["ops"])
    s["t"] += 1
    s["streak"] = s["streak"] + 1 if action == s["last"] else 1
    s["max_streak"] = max(s["max_streak"], s["streak"])
    s["last"] = action
    rc = 0
    if action in ("mental", "calc"):
        if s["done_ops"] >= n:
            cmd, thought, obs = f'echo "{s["value"]}"', "THOUGHT: All steps are done.", f"{s['value']}\n"
        else:
            op, b = task["ops"][s["done_ops"]]
            s["true"] = _apply(s["true"], op, b)
            a = s["value"]
            exact = _apply(a, op, b)
            if action == "calc":
                s["calc_calls"] += 1
                got = exact
                cmd, thought = f'python3 -c "print({a} {op} {b})"', f"THOUGHT: Let me compute {a} {op} {b} with the calculator."
                obs = f"{got}\n"
            else:
                p_err = task["p_err"][s["done_ops"]]
                got = exact if rng.random() >= p_err else exact + rng.choice([-10, -1, 1, 10, 100])
                cmd, thought = f'echo "{a} {op} {b} = {got}"', f"THOUGHT: {a} {op} {b} is {got}."
                obs = f"{a} {op} {b} = {got}\n"
            s["value"] = got
            s["done_ops"] += 1
            if got != s["true"]:
                s["err"] = True
            elif not s["err"]:
                s["correct_steps"] += 1
            s["checked"] = False
    elif action == "check":
        k = s["done_ops"]
        cmd, thought = f'python3 -c "print({_expr(task, k)})"', "THOUGHT: Let me recompute the chain so far to check."
        obs = f"{s['true']}\n"
        if s["err"]:
            s["errseen"] = True
        s["value"] = s["true"]
        s["err"] = False
        s["correct_steps"] = k
        s["checked"] = True
    elif action == "reread":
        cmd, thought, obs = "cat problem.txt", "THOUGHT: Let me reread the problem.", prompt(task) + "\n"
    elif action == "submit":
        s["submitted"] = True
        s["done"] = True
        return "submit", f"THOUGHT: The answer is \\boxed{{{s['value']}}}.", None, 0, True
    else:
        raise ValueError(f"unknown action {action}")
    if s["t"] >= s["limit"]:
        s["done"] = True
    return cmd, thought, obs, rc, s["done"]


def outcome(s):
    n = len(s["task"]["ops"])
    return {
        "resolved": bool(s["submitted"] and s["done_ops"] == n and s["value"] == s["task"]["answer"]),
        "submitted": s["submitted"],
        "hit_step_limit": not s["submitted"],
        "turns": s["t"],
        "answer": s["value"],
        "progress": s["correct_steps"] / n,
        "calc_calls": s["calc_calls"],
        "leaked": False,
        "history_calls": 0,
        "max_same_tool": s["max_streak"],
    }


def generate(n, seed, prefix):
    """Task specs (how data/*.jsonl were made; kept for reference, data/ is frozen)."""
    import random

    r = random.Random(seed)
    tasks = []
    for i in range(n):
        k = r.choice([3, 4, 5, 6, 7, 8])
        x = start = r.randint(10, 99)
        ops, p_err = [], []
        for _ in range(k):
            op = r.choice(["+", "-", "*"])
            b = r.randint(2, 9) if op == "*" and abs(x) > 999 else r.randint(11, 99) if op == "*" else r.randint(10, 999)
            ops.append([op, b])
            p_err.append(0.5 if op == "*" and b > 9 else 0.2 if op == "*" else 0.12)
            x = _apply(x, op, b)
        tasks.append({"id": f"{prefix}-{i:04d}", "start": start, "ops": ops, "p_err": p_err, "answer": x})
    return tasks
