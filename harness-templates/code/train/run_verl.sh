#!/bin/bash
# verl GRPO launch for this harness (single node or, under jobs/train.sbatch, a Ray cluster).
# The reward is this harness's reward/compute_score.py; rollout and validation dumps are
# written where `evotrainer import --format verl` reads them (outputs/<run>/...).
# Any extra argument is passed to verl as a Hydra override, e.g. trainer.total_epochs=1.
set -euo pipefail

HARNESS_DIR=${HARNESS_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
RUN_NAME=${RUN_NAME:-$(basename "$HARNESS_DIR")-$(date +%Y%m%d-%H%M%S)}
OUT_DIR=${OUT_DIR:-$HARNESS_DIR/outputs/$RUN_NAME}
MODEL=${MODEL:-Qwen/Qwen2.5-7B-Instruct}
TRAIN_FILES=${TRAIN_FILES:-$HARNESS_DIR/data/train.parquet}
VAL_FILES=${VAL_FILES:-$HARNESS_DIR/data/eval.parquet}
NNODES=${NNODES:-1}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}

# Samples per prompt (the GRPO group size) and response length come from env/config.json.
read -r N_SAMPLES MAX_RESPONSE TEMPERATURE < <(python3 - "$HARNESS_DIR/env/config.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])).get("rollout", {})
print(r.get("n_samples_per_prompt", 8), r.get("max_response_length", 4096), r.get("temperature", 1.0))
PY
)

mkdir -p "$OUT_DIR"
exec python3 -m verl.trainer.main_ppo \
  algorithm.adv_estimator=grpo \
  algorithm.use_kl_in_reward=False \
  data.train_files="$TRAIN_FILES" \
  data.val_files="$VAL_FILES" \
  data.train_batch_size=256 \
  data.max_prompt_length=2048 \
  data.max_response_length="$MAX_RESPONSE" \
  data.filter_overlong_prompts=True \
  actor_rollout_ref.model.path="$MODEL" \
  actor_rollout_ref.actor.optim.lr=1e-6 \
  actor_rollout_ref.actor.ppo_mini_batch_size=64 \
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \
  actor_rollout_ref.actor.use_kl_loss=True \
  actor_rollout_ref.actor.kl_loss_coef=0.001 \
  actor_rollout_ref.actor.entropy_coeff=0 \
  actor_rollout_ref.rollout.name=vllm \
  actor_rollout_ref.rollout.n="$N_SAMPLES" \
  reward_model.reward_manager=prime \
  actor_rollout_ref.rollout.temperature="$TEMPERATURE" \
  actor_rollout_ref.rollout.gpu_memory_utilization=0.6 \
  actor_rollout_ref.rollout.tensor_model_parallel_size=1 \
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8 \
  actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8 \
  custom_reward_function.path="$HARNESS_DIR/reward/compute_score.py" \
  custom_reward_function.name=compute_score \
  trainer.logger='["console"]' \
  trainer.project_name=evotrainer \
  trainer.experiment_name="$RUN_NAME" \
  trainer.nnodes="$NNODES" \
  trainer.n_gpus_per_node="$GPUS_PER_NODE" \
  trainer.default_local_dir="$OUT_DIR/checkpoints" \
  trainer.rollout_data_dir="$OUT_DIR/rollout_data" \
  trainer.validation_data_dir="$OUT_DIR/validation_data" \
  trainer.val_before_train=True \
  trainer.save_freq=20 \
  trainer.test_freq=10 \
  trainer.total_epochs=15 \
  "$@"
