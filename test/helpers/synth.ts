import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Writes a generated mini-swe-agent trajectory (and its SWE-bench report): the data of
 * the rule tests, which need runs that show one condition each.
 */
export function writeTrajectory(root: string, id: string, opts: { commands: string[]; resolved: boolean; formatErrors?: number; timeouts?: number; task?: string }): void {
  mkdirSync(path.join(root, 'trajs'), { recursive: true });
  mkdirSync(path.join(root, 'reports'), { recursive: true });
  const messages: { role: string; content: string }[] = [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: opts.task ?? `Fix issue ${id}.` },
  ];
  for (let i = 0; i < (opts.formatErrors ?? 0); i++) {
    messages.push({ role: 'assistant', content: 'I will think first.' }, { role: 'user', content: 'Please always provide EXACTLY ONE action in triple backticks, found 0 actions.' });
  }
  opts.commands.forEach((cmd, i) => {
    messages.push({ role: 'assistant', content: `THOUGHT: step ${i}\n\n\`\`\`bash\n${cmd}\n\`\`\`` });
    messages.push(
      i < (opts.timeouts ?? 0)
        ? { role: 'user', content: `The last command <command>${cmd}</command> timed out and has been killed.` }
        : { role: 'user', content: `<returncode>0</returncode>\n<output>\nok\n</output>` },
    );
  });
  writeFileSync(path.join(root, 'trajs', `${id}.traj.json`), JSON.stringify({ instance_id: id, trajectory_format: 'mini-swe-agent-1', info: { exit_status: 'Submitted', submission: 'diff' }, messages }));
  writeFileSync(path.join(root, 'reports', `${id}.report.json`), JSON.stringify({ patch_exists: true, patch_successfully_applied: true, resolved: opts.resolved, tests_status: { FAIL_TO_PASS: { success: ['t1'], failure: [] }, PASS_TO_PASS: { success: [], failure: [] } } }));
}

/** An agent's command mix: how many searches, edits and test runs, in that order. */
export function commandMix(searches: number, edits: number, tests: number, extra: string[] = []): string[] {
  return [
    ...Array.from({ length: searches }, (_, i) => `grep -rn "needle${i}" src/`),
    ...Array.from({ length: edits }, (_, i) => `sed -i 's/a${i}/b${i}/' src/mod${i}.py`),
    ...Array.from({ length: tests }, () => 'python -m pytest tests/test_mod.py -q'),
    ...extra,
    'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached',
  ];
}
