#!/bin/bash
# verl GRPO launch for the SWE harness: multi-turn agent rollouts (verl's agent loop) in a
# repository workspace per task, judged by reward/compute_score.py (SWE-bench semantics).
# The agent's workspace comes from env/workspace.py, which scrubs git history when
# env/config.json says so (the default). Extra arguments are passed on as Hydra overrides.
set -euo pipefail

HARNESS_DIR=${HARNESS_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
RUN_NAME=${RUN_NAME:-$(basename "$HARNESS_DIR")-$(date +%Y%m%d-%H%M%S)}
OUT_DIR=${OUT_DIR:-$HARNESS_DIR/outputs/$RUN_NAME}
MODEL=${MODEL:-Qwen/Qwen3-8B}
TRAIN_FILES=${TRAIN_FILES:-$HARNESS_DIR/data/train.parquet}
VAL_FILES=${VAL_FILES:-$HARNESS_DIR/data/eval.parquet}
NNODES=${NNODES:-1}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
# Your agent loop / tool configuration (bash tool in the task workspace), see verl's
# multi-turn documentation; the workspace it creates must come from env/workspace.py.
TOOL_CONFIG=${TOOL_CONFIG:?set TOOL_CONFIG to your agent tool config (verl multi-turn tool_config_path: a bash tool in the env/workspace.py workspace)}

read -r N_SAMPLES MAX_RESPONSE TEMPERATURE STEP_LIMIT < <(python3 - "$HARNESS_DIR/env/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
r, e = c.get("rollout", {}), c.get("environment", {})
print(r.get("n_samples_per_prompt", 8), r.get("max_response_length", 32768), r.get("temperature", 1.0), e.get("step_limit", 75))
PY
)

export EVOTRAINER_SWE_CONFIG="$HARNESS_DIR/env/config.json"
mkdir -p "$OUT_DIR"
exec python3 -m verl.trainer.main_ppo \
  algorithm.adv_estimator=grpo \
  algorithm.use_kl_in_reward=False \
  data.train_files="$TRAIN_FILES" \
  data.val_files="$VAL_FILES" \
  data.train_batch_size=32 \
  data.max_prompt_length=8192 \
  data.max_response_length="$MAX_RESPONSE" \
  data.return_raw_chat=True \
  actor_rollout_ref.model.path="$MODEL" \
  actor_rollout_ref.actor.optim.lr=1e-6 \
  actor_rollout_ref.actor.ppo_mini_batch_size=32 \
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \
  actor_rollout_ref.actor.use_kl_loss=True \
  actor_rollout_ref.actor.kl_loss_coef=0.001 \
  actor_rollout_ref.rollout.name=sglang \
  actor_rollout_ref.rollout.mode=async \
  actor_rollout_ref.rollout.multi_turn.enable=True \
  actor_rollout_ref.rollout.multi_turn.max_assistant_turns="$STEP_LIMIT" \
  actor_rollout_ref.rollout.multi_turn.tool_config_path="$TOOL_CONFIG" \
  actor_rollout_ref.rollout.n="$N_SAMPLES" \
  actor_rollout_ref.rollout.temperature="$TEMPERATURE" \
  actor_rollout_ref.rollout.gpu_memory_utilization=0.6 \
  actor_rollout_ref.rollout.tensor_model_parallel_size=2 \
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 \
  actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1 \
  reward_model.reward_manager=prime \
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
  trainer.save_freq=10 \
  trainer.test_freq=5 \
  trainer.total_epochs=5 \
  "$@"
