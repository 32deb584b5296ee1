"""Entry point of a toy-swe training run (frozen):

    python3 train/train.py --out "$EVOTRAINER_OUT" --seed 0

GRPO on the tasks of data/train.jsonl with the reward, filters and environment settings
of this harness; writes verl dumps (rollout_data/, validation_data/) and metrics.json.
"""

import os
import sys

sys.dont_write_bytecode = True  # keep the harness tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import grpo  # noqa: E402
import toy_swe  # noqa: E402

if __name__ == "__main__":
    grpo.main(toy_swe)
