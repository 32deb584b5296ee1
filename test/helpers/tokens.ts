/**
 * verifiers rollouts as vf-eval writes them (results.jsonl + metadata.json), each model call's
 * `TrajectoryStepTokens` carrying its per-token log-probabilities (verifiers/types.py).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** A vf-eval results.jsonl line (verifiers RolloutOutput) of a two-call tool-using rollout, with TrajectoryStepTokens per call. */
export function vfLine(id: number, logprobs: (number | null)[][]): string {
  const user = { role: 'user', content: `What is ${id} squared? <b>use the tool</b>` };
  const completion = [
    { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'python', arguments: JSON.stringify({ code: `print(${id}**2)` }) } }] },
    { role: 'tool', tool_call_id: 'c1', content: String(id * id) },
    { role: 'assistant', content: `The answer is ${id * id}.` },
  ];
  const trajectory = logprobs.map((lp, k) => ({
    prompt: [user],
    completion: [completion[k * 2]],
    response: null,
    tokens: { prompt_ids: [1, 2, 3], prompt_mask: [0, 0, 0], completion_ids: lp.map((_, i) => 1000 + i), completion_mask: lp.map(() => 1), completion_logprobs: lp, overlong_prompt: false, is_truncated: false },
    reward: null,
    advantage: null,
    is_truncated: false,
    trajectory_id: `t-${id}`,
    extras: {},
  }));
  return JSON.stringify({ example_id: id, prompt: [user], completion, answer: String(id * id), task: 'squares', reward: 1, metrics: { correct_answer: 1 }, is_completed: true, is_truncated: false, stop_condition: 'no_tools_called', trajectory });
}

export function writeVfEval(dir: string, lines: string[]): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'metadata.json'), JSON.stringify({ env: 'squares', model: 'qwen', sampling_args: { temperature: 1 } }));
  const file = path.join(dir, 'results.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}
