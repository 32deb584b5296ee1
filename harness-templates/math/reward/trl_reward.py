"""TRL entry point: ``from reward.trl_reward import reward_func`` (see compute_score.reward_func)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from compute_score import reward_func  # noqa: E402,F401
