"""The toy-swe harness's own checks: python3 -m unittest (from the harness root)."""

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
import toy_swe  # noqa: E402

reward = grpo.load_module(os.path.join(ROOT, "reward", "compute_score.py"), "toy_reward")
filters = grpo.load_module(os.path.join(ROOT, "filters", "group_filter.py"), "toy_filters")
TASK = grpo.read_jsonl(os.path.join(ROOT, "data", "eval.jsonl"))[0]


def play(actions, scrub=False, limit=12, seed=0):
    s = toy_swe.reset(TASK, {"step_limit": limit, "scrub_git_history": scrub})
    rng = random.Random(seed)
    turns = []
    for a in actions:
        turns.append(toy_swe.step(s, a, rng))
        if s["done"]:
            break
    return s, turns


class Environment(unittest.TestCase):
    def test_history_reveals_the_fix_unless_scrubbed(self):
        s, turns = play(["history", "edit", "submit"])
        self.assertEqual(turns[0][0], "git log -p -n 3")
        self.assertIn(TASK["fixed"], turns[0][2])
        # The commit message names the reference answer too: what the rollout is credited for, shown before it writes it.
        self.assertIn("\n    %s\n" % toy_swe.ground_truth(TASK), turns[0][2])
        self.assertTrue(toy_swe.outcome(s)["resolved"] and toy_swe.outcome(s)["leaked"])
        s, turns = play(["history", "edit", "submit"], scrub=True)
        self.assertNotIn(TASK["fixed"], turns[0][2])
        self.assertFalse(toy_swe.outcome(s)["resolved"] or toy_swe.outcome(s)["leaked"])

    def test_a_blind_edit_does_not_fix_and_the_test_says_so(self):
        s, turns = play(["edit", "test", "submit"])
        self.assertEqual(turns[1][3], 1)
        self.assertIn("1 failed", turns[1][2])
        self.assertFalse(toy_swe.outcome(s)["resolved"])

    def test_the_step_limit_ends_an_episode_without_a_submission(self):
        s, _ = play(["search"] * 20, limit=5)
        o = toy_swe.outcome(s)
        self.assertEqual(o["turns"], 5)
        self.assertTrue(o["hit_step_limit"])
        self.assertEqual(o["max_same_tool"], 5)

    def test_the_honest_path_can_solve_the_task(self):
        solved = 0
        for seed in range(20):
            s, _ = play(["search"] + ["open"] * len(TASK["candidates"]) + ["edit", "test", "edit", "test", "edit", "test", "submit"], seed=seed)
            solved += toy_swe.outcome(s)["resolved"]
        self.assertGreater(solved, 0)


class Reward(unittest.TestCase):
    def test_components_and_score(self):
        transcript = "```bash\ngit log -p -n 3\n```\n```bash\nsed -i 's/x/y/' src/%s\n```\n```bash\nsubmit\n```" % TASK["bug_file"]
        r = reward.compute_score("toy-swe", transcript, toy_swe.ground_truth(TASK), {"resolved": True, "step_limit": 12})
        self.assertEqual(r["acc"], 1.0)
        self.assertEqual(r["localization"], 1.0)
        self.assertAlmostEqual(r["efficiency"], 1 - 2 / 11)
        weights = reward.CONFIG["weights"]
        self.assertAlmostEqual(r["score"], sum(weights.get(k, 0) * v for k, v in r.items() if k != "score"))

    def test_a_dump_row_rescores_to_its_score(self):
        r = reward.compute_score("toy-swe", "```bash\nsubmit\n```", toy_swe.ground_truth(TASK), {"acc": 1.0})
        self.assertEqual(r["acc"], 1.0)


class Filters(unittest.TestCase):
    def test_zero_variance_groups_and_truncation(self):
        dead = [{"score": 1.0, "turns": 3}] * 4
        live = [{"score": 1.0, "turns": 3}, {"score": 0.0, "turns": 3}]
        self.assertTrue(filters.keep_group(live))
        self.assertEqual(filters.keep_group(dead), not filters.CONFIG.get("drop_zero_variance_groups"))
        self.assertTrue(filters.keep_trajectory({"turns": 3}))


class Training(unittest.TestCase):
    def test_a_short_run_is_deterministic(self):
        with tempfile.TemporaryDirectory() as d:
            runs = []
            for name in ("a", "b"):
                t = grpo.Trainer(ROOT, toy_swe, os.path.join(d, name), 3)
                t.train_cfg.update(steps=2, batch_tasks=4, group_size=4)
                t.eval_tasks = t.eval_tasks[:5]
                t.train()
                runs.append((json.dumps(t.policy.w), t.evaluate()[0]))
            self.assertEqual(runs[0], runs[1])


if __name__ == "__main__":
    unittest.main()
