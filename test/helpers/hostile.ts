import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Markup that would run if rollout text ever reached the DOM as HTML. Each sets a global flag. */
export const SCRIPT_TEXT = '<script>window.__evoPwned = "script"</script>';
export const IMG_TEXT = '<img src=x onerror="window.__evoPwned = \'img\'">';
/** Red text, a reset, a cursor move and a terminal-title escape. */
export const ANSI_TEXT = '\u001b[31mRED-ALERT\u001b[0m plain \u001b[2J\u001b]0;pwned-title\u0007after-title';
/** "Trojan Source": shown raw, a right-to-left override and isolates make this line read other than its logical order. */
export const TROJAN_TEXT = 'if access_level != "user\u202E \u2066// Check if admin\u2069 \u2066" {';
export const HUGE_LINE_CHARS = 10 * 1024 * 1024;
export const HUGE_LINE_END = 'END-OF-THE-HUGE-LINE';

/**
 * A mini-swe-agent trajectory whose every text is hostile: markup in the task, the
 * commands, the observations and the submitted diff; ANSI escapes; a bidirectional
 * override ("Trojan Source"); and one 10 MB line.
 * Written with its SWE-bench report so it imports like the real ones.
 */
export function writeHostileTrajectory(root: string, id = 'hostile__repo-1'): { hugeMessageIndex: number } {
  mkdirSync(path.join(root, 'trajs'), { recursive: true });
  mkdirSync(path.join(root, 'reports'), { recursive: true });
  const diff = [
    'diff --git a/app.py b/app.py',
    'index 1111111..2222222 100644',
    '--- a/app.py',
    '+++ b/app.py',
    '@@ -1,2 +1,2 @@',
    ' def render():',
    `-    return "${SCRIPT_TEXT}"`,
    `+    return "${IMG_TEXT}"`,
    '',
  ].join('\n');
  const messages = [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: `Fix the page. ${SCRIPT_TEXT} ${IMG_TEXT}` },
    { role: 'assistant', content: `THOUGHT: look ${TROJAN_TEXT}\n\n\`\`\`bash\necho '${IMG_TEXT}' > x.html\n\`\`\`` },
    { role: 'user', content: `<returncode>1</returncode>\n<output>\n${ANSI_TEXT}\n${SCRIPT_TEXT}\n</output>` },
    { role: 'assistant', content: 'THOUGHT: print a lot\n\n```bash\npython -c "print(\'A\' * 10485760)"\n```' },
    { role: 'user', content: `<returncode>0</returncode>\n<output>\n${'A'.repeat(HUGE_LINE_CHARS)}${HUGE_LINE_END}\n</output>` },
    { role: 'assistant', content: 'THOUGHT: done\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached\n```' },
    { role: 'user', content: diff },
  ];
  writeFileSync(path.join(root, 'trajs', `${id}.traj.json`), JSON.stringify({ instance_id: id, trajectory_format: 'mini-swe-agent-1', info: { exit_status: 'Submitted', submission: diff }, messages }));
  writeFileSync(
    path.join(root, 'reports', `${id}.report.json`),
    JSON.stringify({ patch_exists: true, patch_successfully_applied: true, resolved: false, tests_status: { FAIL_TO_PASS: { success: [], failure: ['t1'] }, PASS_TO_PASS: { success: [], failure: [] } } }),
  );
  return { hugeMessageIndex: 5 };
}
