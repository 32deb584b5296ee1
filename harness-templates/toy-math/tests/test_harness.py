"""The toy-math harness's own checks: python3 -m unittest (from the harness root)."""

import json
import os
import random
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "train"))
sys.dont_write_bytecode = True

import grpo  # noqa: E402
import toy_calc  # noqa: E402

reward = grpo.load_module(os.path.join(ROOT, "reward", "compute_score.py"), "toy_reward")
filters = grpo.load_module(os.path.join(ROOT, "filters", "group_filter.py"), "toy_filters")
TASK = grpo.read_jsonl(os.path.join(ROOT, "data", "eval.jsonl"))[0]


def play(actions, limit=12, seed=0):
    s = toy_calc.reset(TASK, {"step_limit": limit})
    rng = random.Random(seed)
    turns = []
    for a in actions:
        turns.append(toy_calc.step(s, a, rng))
        if s["done"]:
            break
    return s, turns


class Environment(unittest.TestCase):
    def test_the_calculator_solves_the_chain(self):
        s, turns = play(["calc"] * len(TASK["ops"]) + ["submit"])
        self.assertTrue(turns[0][0].startswith('python3 -c "print('))
        o = toy_calc.outcome(s)
        self.assertTrue(o["resolved"])
        self.assertEqual(o["progress"], 1.0)
        self.assertEqual(o["answer"], TASK["answer"])

    def test_check_repairs_a_wrong_head_computation(self):
        wrong = 0
        for seed in range(50):
            s, _ = play(["mental"] * len(TASK["ops"]), seed=seed)
            wrong += s["value"] != TASK["answer"]
            s, _ = play(["mental"] * len(TASK["ops"]) + ["check", "submit"], seed=seed)
            self.assertTrue(toy_calc.outcome(s)["resolved"])
        self.assertGreater(wrong, 0)

    def test_submitting_early_is_wrong(self):
        s, _ = play(["calc", "submit"])
        self.assertFalse(toy_calc.outcome(s)["resolved"])


class Reward(unittest.TestCase):
    def test_correctness_is_read_from_the_transcript(self):
        s, turns = play(["calc"] * len(TASK["ops"]) + ["submit"])
        _, response = grpo.render(toy_calc, TASK, [(thought, cmd, obs, rc) for cmd, thought, obs, rc, _ in turns])
        r = reward.compute_score("toy-math", response, toy_calc.ground_truth(TASK), {})
        self.assertEqual(r["acc"], 1.0)
        r = reward.compute_score("toy-math", response.replace(str(TASK["answer"]) + "}", "0}"), toy_calc.ground_truth(TASK), {})
        self.assertEqual(r["acc"], 0.0)


class Filters(unittest.TestCase):
    def test_zero_variance_groups(self):
        self.assertTrue(filters.keep_group([{"score": 1.0}, {"score": 0.0}]))
        self.assertEqual(filters.keep_group([{"score": 0.0}] * 3), not filters.CONFIG.get("drop_zero_variance_groups"))


class Training(unittest.TestCase):
    def test_a_short_run_is_deterministic(self):
        with tempfile.TemporaryDirectory() as d:
            runs = []
            for name in ("a", "b"):
                t = grpo.Trainer(ROOT, toy_calc, os.path.join(d, name), 3)
                t.train_cfg.update(steps=2, batch_tasks=4, group_size=4)
                t.eval_tasks = t.eval_tasks[:5]
                t.train()
                runs.append((json.dumps(t.policy.w), t.evaluate()[0]))
            self.assertEqual(runs[0], runs[1])


if __name__ == "__main__":
    unittest.main()
