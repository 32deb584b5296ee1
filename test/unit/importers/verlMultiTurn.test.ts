import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { alignMessages } from '../../../src/core/explore/explorer';
import { chatTurns, verlImporter } from '../../../src/core/store/importers/verl';
import { fixtures } from '../../helpers/data';
import { readAll } from '../../helpers/importers';
import { tempDir } from '../../helpers/tmp';

const prompt = '<|im_start|>system\nYou run one shell command per turn.<|im_end|>\n<|im_start|>user\nFix `add_items`, then submit.<|im_end|>\n<|im_start|>assistant\n';
const turn = (thought: string, command: string) => `${thought}\n\n\`\`\`bash\n${command}\n\`\`\`<|im_end|>\n`;
const tool = (rc: number, out: string) => `<|im_start|>user\n<tool_response>\n<returncode>${rc}</returncode>\n<output>\n${out}</output>\n</tool_response><|im_end|>\n`;
const output = [
  turn('THOUGHT: look at the history', 'git log -p -n 3'),
  tool(0, 'commit 9f3b2d7\n-    return a - b\n+    return a + b\n'),
  '<|im_start|>assistant\n',
  turn('THOUGHT: apply it', "sed -i 's/a - b/a + b/' 'src/pkg/$(rm -rf x);core.py'"),
  tool(0, ''),
  '<|im_start|>assistant\n',
  turn('THOUGHT: test', 'python -m pytest -q tests/test_core.py'),
  tool(1, '<script>alert(1)</script>\u001b[31mFAILED\u001b[0m 1 failed\n'),
  '<|im_start|>assistant\n',
  'Two blocks:\n```bash\nls\n```\n```bash\npwd\n```<|im_end|>\n',
  '<|im_start|>assistant\n',
  turn('THOUGHT: done', 'submit'),
].join('');

describe('verl importer, multi-turn chat-template rollouts', () => {
  const dir = tempDir();
  const file = path.join(dir, 'rollout_data', '7.jsonl');

  it('splits the transcript into assistant commands and tool results with exit codes', async () => {
    const { mkdirSync } = await import('node:fs');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify({ input: prompt, output, gts: 'pkg/core.py: return a + b', score: 1, step: 7, data_source: 'toy-swe', acc: 1, efficiency: 0.5 })}\n`);
    const { good, bad } = await readAll(verlImporter, file);
    assert.equal(bad.length, 0);
    const r = good[0]!.record;
    assert.equal(r.response, output, 'the response text is kept as written');
    assert.equal(r.correct, true);
    assert.deepEqual(r.rewardComponents, { efficiency: 0.5 });
    assert.equal(r.numTurns, 5);
    const steps = r.steps!;
    assert.deepEqual(
      steps.map((s) => [s.role, s.actionKind, s.command, s.exitCode, s.formatError]),
      [
        ['system', 'message', null, null, false],
        ['user', 'message', null, null, false],
        ['assistant', 'command', 'git log -p -n 3', null, false],
        ['tool', 'observation', null, 0, false],
        ['assistant', 'edit', "sed -i 's/a - b/a + b/' 'src/pkg/$(rm -rf x);core.py'", null, false],
        ['tool', 'observation', null, 0, false],
        ['assistant', 'test', 'python -m pytest -q tests/test_core.py', null, false],
        ['tool', 'observation', null, 1, false],
        ['assistant', 'other', null, null, true],
        ['assistant', 'submit', 'submit', null, false],
      ],
    );
    assert.equal(steps[7]!.observationBytes, Buffer.byteLength('<returncode>1</returncode>\n<output>\n<script>alert(1)</script>\u001b[31mFAILED\u001b[0m 1 failed\n</output>', 'utf8'));
  });

  it('the trajectory viewer shows the turns, each beside its step, without chat-template tokens', async () => {
    const { good } = await readAll(verlImporter, file);
    const r = good[0]!.record;
    // The steps as the store keeps them (one row per step, numbered from 0).
    const steps = r.steps!.map((st, turn) => ({ rollout_id: 1, turn, role: st.role, action_kind: st.actionKind, command: st.command, exit_code: st.exitCode, observation_bytes: st.observationBytes, format_error: st.formatError, timeout: st.timeout, truncated: st.truncated, tokens: st.tokens }));
    const msgs = alignMessages({ prompt: r.prompt as string, prompt_format: 'text', response: r.response as string, response_format: 'text' }, steps);
    assert.equal(msgs.length, steps.length, 'one message per step');
    assert.deepEqual(msgs.map((m) => [m.part, m.role, m.command, m.exitCode, m.formatError]), [
      ['prompt', 'system', null, null, false],
      ['prompt', 'user', null, null, false],
      ['response', 'assistant', 'git log -p -n 3', null, false],
      ['response', 'user', null, 0, false],
      ['response', 'assistant', "sed -i 's/a - b/a + b/' 'src/pkg/$(rm -rf x);core.py'", null, false],
      ['response', 'user', null, 0, false],
      ['response', 'assistant', 'python -m pytest -q tests/test_core.py', null, false],
      ['response', 'user', null, 1, false],
      ['response', 'assistant', null, null, true],
      ['response', 'assistant', 'submit', null, false],
    ]);
    assert.ok(msgs.every((m) => !/<\|im_(start|end)\|>|<\/?tool_response>/.test(m.full)), 'no template tokens');
    assert.equal(msgs[1]!.full, 'Fix `add_items`, then submit.');
    assert.equal(msgs[7]!.full, '<returncode>1</returncode>\n<output>\n<script>alert(1)</script>\u001b[31mFAILED\u001b[0m 1 failed\n</output>');
  });

  it('sends multi-turn dumps to the streaming path and keeps single-turn dumps on the bulk path', () => {
    const head = readFileSync(file, 'utf8');
    assert.equal(verlImporter.bulk!(file, head, {}), null);
    // a head cut inside the first record still shows the marker
    assert.equal(verlImporter.bulk!(file, head.slice(0, 400), {}), null);
    const single = path.join(fixtures, 'verl', 'rollout_data', '12.jsonl');
    assert.notEqual(verlImporter.bulk!(single, readFileSync(single, 'utf8'), {}), null);
  });

  it('keeps single-turn records without steps, even with a chat-template prompt', async () => {
    const single = path.join(dir, 'rollout_data', '8.jsonl');
    writeFileSync(single, `${JSON.stringify({ input: prompt, output: 'The answer is \\boxed{7}', gts: '7', score: 1, step: 8 })}\n`);
    assert.notEqual(verlImporter.bulk!(single, readFileSync(single, 'utf8'), {}), null);
    const { good } = await readAll(verlImporter, single);
    assert.equal(good[0]!.record.steps, undefined);
    assert.equal(good[0]!.record.numTurns, 1);
  });

  it('takes a last turn without a command for the final answer, and an earlier one for a format error', async () => {
    const f = path.join(dir, 'rollout_data', '9.jsonl');
    const out = ['Let me check.<|im_end|>\n', tool(0, 'ok\n'), '<|im_start|>assistant\n', turn('THOUGHT: run it', 'ls'), tool(0, 'a.py\n'), '<|im_start|>assistant\nThe answer is 4.<|im_end|>'].join('');
    writeFileSync(f, `${JSON.stringify({ input: prompt, output: out, gts: '4', score: 1, step: 9 })}\n`);
    const { good } = await readAll(verlImporter, f);
    const assistant = good[0]!.record.steps!.filter((s) => s.role === 'assistant');
    assert.deepEqual(assistant.map((s) => [s.actionKind, s.formatError]), [['other', true], ['search', false], ['message', false]]);
  });

  it('reads a response that starts with a role header and a tool turn', () => {
    assert.deepEqual(chatTurns('<|im_start|>assistant\nhi<|im_end|>\n<|im_start|>tool\nok<|im_end|>\n<|im_start|>weird\nx'), [
      { role: 'assistant', content: 'hi' },
      { role: 'tool', content: 'ok' },
      { role: 'user', content: 'x' },
    ]);
  });
});
