"""Tests of the group and trajectory filters. Run from the harness root: python3 -m unittest"""
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "filters"))

from group_filter import group_std, keep_group, keep_trajectory, load_config  # noqa: E402


def rollout(i, score, response="r", **extra):
    return {"id": i, "prompt": "p", "response": response, "ground_truth": "1", "data_source": "math",
            "score": score, "acc": score, "turns": 1, "extra_info": extra}


class FilterTest(unittest.TestCase):
    def test_dead_groups_are_dropped(self):
        self.assertFalse(keep_group([rollout(i, 1.0) for i in range(8)]))
        self.assertFalse(keep_group([rollout(i, 0.0) for i in range(8)]))

    def test_groups_with_signal_are_kept(self):
        self.assertTrue(keep_group([rollout(0, 1.0), rollout(1, 0.0), rollout(2, 0.0)]))

    def test_min_std(self):
        cfg = dict(load_config(), min_group_std=0.45)
        g = [rollout(0, 1.0)] + [rollout(i, 0.0) for i in range(1, 8)]
        self.assertAlmostEqual(group_std(g), 0.3307, places=3)
        self.assertFalse(keep_group(g, cfg))
        self.assertTrue(keep_group([rollout(0, 1.0), rollout(1, 0.0)], cfg))

    def test_singletons_and_missing_scores(self):
        self.assertFalse(keep_group([rollout(0, 1.0)]))
        self.assertFalse(keep_trajectory(rollout(0, None)))
        self.assertFalse(keep_trajectory(rollout(0, "nan")))
        self.assertFalse(keep_group([rollout(0, 1.0), rollout(1, None)]))

    def test_truncation_switch(self):
        cfg = dict(load_config(), drop_truncated=True, max_response_chars=10)
        self.assertFalse(keep_trajectory(rollout(0, 1.0, truncated=True), cfg))
        self.assertFalse(keep_trajectory(rollout(0, 1.0, response="x" * 11), cfg))
        self.assertTrue(keep_trajectory(rollout(0, 1.0, response="x" * 10), cfg))
        self.assertTrue(keep_trajectory(rollout(0, 1.0, truncated=True), dict(cfg, drop_truncated=False)))

    def test_config_file_is_read(self):
        self.assertTrue(load_config()["drop_zero_variance_groups"])


if __name__ == "__main__":
    unittest.main()
