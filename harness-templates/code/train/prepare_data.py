"""Converts JSON-lines tasks ({id, prompt, ground_truth, data_source}) into verl's parquet rows.

    python3 train/prepare_data.py data/eval.jsonl data/eval.parquet
    python3 train/prepare_data.py my_train.jsonl data/train.parquet

Needs pandas + pyarrow (present wherever verl is installed); the reward code itself needs
neither.
"""
import json
import sys


def to_verl_row(task, index, split):
    return {
        "data_source": task.get("data_source", "code"),
        "prompt": [{"role": "user", "content": task["prompt"]}],
        "ability": "code",
        "reward_model": {"style": "rule", "ground_truth": task["ground_truth"] if isinstance(task["ground_truth"], str) else json.dumps(task["ground_truth"])},
        "extra_info": {"split": split, "index": index, "id": task.get("id", str(index))},
    }


def main(src, dst):
    import pandas as pd  # cluster-side dependency

    split = "test" if "eval" in src or "test" in src else "train"
    with open(src, encoding="utf-8") as f:
        rows = [to_verl_row(json.loads(line), i, split) for i, line in enumerate(f) if line.strip()]
    pd.DataFrame(rows).to_parquet(dst)
    print(f"{len(rows)} rows -> {dst}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: prepare_data.py INPUT.jsonl OUTPUT.parquet")
    main(sys.argv[1], sys.argv[2])
