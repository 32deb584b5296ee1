import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { alignMessages, chunk, looksLikeDiff } from '../../src/core/explore/explorer';
import type { StepRow } from '../../src/core/store/store';
import { EXPLORER_COLUMNS, type ExplorerRow } from '../../src/core/explore/types';
import { ansiSegments, cellText, diffLineKind, diffLines, plainText } from '../../src/webview/explorer/text';
import { ANSI_TEXT } from '../helpers/hostile';
import { MoreTextSchema, OpenExplorerArgsSchema, QuerySchema } from '../../src/viewer/explorer/protocol';

const plain = (text: string) => ansiSegments(text).map((s) => s.text).join('');

describe('explorer text: ANSI escapes', () => {
  it('turns SGR colours into classes from a fixed list and keeps the text literal', () => {
    const segs = ansiSegments('a\u001b[1;31mRED\u001b[0m b \u001b[92mgreen\u001b[39m c');
    assert.deepEqual(segs, [
      { text: 'a', classes: '' },
      { text: 'RED', classes: 'ansi-fg-1 ansi-bold' },
      { text: ' b ', classes: '' },
      { text: 'green', classes: 'ansi-fg-10' },
      { text: ' c', classes: '' },
    ]);
    for (const s of segs) assert.match(s.classes, /^(|(ansi-[a-z]+(-\d+)?|hidden-char)( (ansi-[a-z]+(-\d+)?|hidden-char))*)$/);
  });

  it('drops cursor moves, clears and terminal-title sequences; shows other control characters as marked code points', () => {
    assert.equal(plain('x\u001b[2J\u001b[10;5Hy\u001b]0;owned\u0007z\u001b]8;;http://e\u001b\\link'), 'xyzlink');
    assert.equal(plain('bell\u0007 nul\u0000 del\u007f'), 'bell⟨U+0007⟩ nul⟨U+0000⟩ del⟨U+007F⟩');
    assert.equal(ansiSegments('\u0007')[0]!.classes, 'hidden-char');
    assert.equal(plain('a\r\nb\rc'), 'a\nb\nc', 'CRLF and a lone CR become line breaks');
  });

  it('leaves markup as text: no segment is ever interpreted', () => {
    const t = '<script>alert(1)</script><img src=x onerror=alert(2)>';
    assert.deepEqual(ansiSegments(t), [{ text: t, classes: '' }]);
  });

  it('maps 256-colour codes under 16 onto the theme colours and ignores true colour', () => {
    assert.deepEqual(ansiSegments('\u001b[38;5;9mA\u001b[38;2;1;2;3mB'), [{ text: 'AB', classes: 'ansi-fg-9' }]);
  });

  it('handles a 10 MB line in one pass', () => {
    const big = `${'x'.repeat(10 * 1024 * 1024)}\u001b[31mEND`;
    const t = performance.now();
    const segs = ansiSegments(big);
    assert.equal(segs.length, 2);
    assert.equal(segs[1]!.text, 'END');
    assert.ok(performance.now() - t < 5000);
  });
});

describe('explorer text: diffs', () => {
  it('classifies unified diff lines', () => {
    assert.deepEqual(['diff --git a/x b/x', '--- a/x', '+++ b/x', '@@ -1 +1 @@', '+new', '-old', ' same'].map(diffLineKind), ['meta', 'meta', 'meta', 'hunk', 'add', 'del', 'context']);
  });

  it('cuts an overlong diff line and says how much is hidden', () => {
    const [line] = diffLines(`+${'y'.repeat(5000)}`, 100);
    assert.equal(line!.kind, 'add');
    assert.match(line!.text, /… \(4901 more characters on this line\)$/);
  });

  it('recognizes a submitted patch, not prose', () => {
    assert.ok(looksLikeDiff('diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n'));
    assert.ok(!looksLikeDiff('The answer is 42'));
    assert.ok(!looksLikeDiff(null));
  });
});

describe('explorer text: chunks and conversation alignment', () => {
  it('cuts long texts into pages without splitting a surrogate pair', () => {
    const c = chunk('abcdef', 0, 4);
    assert.deepEqual(c, { text: 'abcd', length: 6, end: 4 });
    assert.deepEqual(chunk('abcdef', 4, 4), { text: 'ef', length: 6, end: 6 });
    const emoji = `${'a'.repeat(3)}😀b`;
    const first = chunk(emoji, 0, 4);
    assert.equal(first.text, 'aaa');
    assert.equal(chunk(emoji, first.end, 10).text, '😀b');
  });

  const step = (turn: number, over: Partial<StepRow> = {}): StepRow => ({ rollout_id: 1, turn, role: 'assistant', action_kind: 'other', command: null, exit_code: null, observation_bytes: null, format_error: false, timeout: false, truncated: false, tokens: null, ...over });

  it('aligns one step per message of the whole conversation', () => {
    const msgs = alignMessages(
      { prompt: JSON.stringify([{ role: 'system', content: 's' }, { role: 'user', content: 'u' }]), prompt_format: 'messages', response: JSON.stringify([{ role: 'assistant', content: 'a' }, { role: 'user', content: 'o' }]), response_format: 'turns' },
      [step(0, { role: 'system', action_kind: 'message' }), step(1, { role: 'user', action_kind: 'message' }), step(2, { command: 'ls', action_kind: 'search' }), step(3, { role: 'user', action_kind: 'observation', exit_code: 2 })],
    );
    assert.deepEqual(msgs.map((m) => [m.index, m.role, m.part, m.command, m.exitCode]), [
      [0, 'system', 'prompt', null, null],
      [1, 'user', 'prompt', null, null],
      [2, 'assistant', 'response', 'ls', null],
      [3, 'user', 'response', null, 2],
    ]);
  });

  it('aligns steps with the response turns only, and shows none when counts disagree', () => {
    const base = { prompt: 'question', prompt_format: 'text', response: JSON.stringify([{ role: 'assistant', content: 'a' }]), response_format: 'turns' };
    assert.equal(alignMessages(base, [step(0, { command: 'pytest' })])[1]!.command, 'pytest');
    const none = alignMessages(base, [step(0, { command: 'x' }), step(1), step(2)]);
    assert.ok(none.every((m) => m.command === null));
    const text = alignMessages({ prompt: 'q', prompt_format: 'text', response: 'just text', response_format: 'text' }, []);
    assert.deepEqual(text.map((m) => [m.role, m.full]), [['user', 'q'], ['assistant', 'just text']]);
  });
});

describe('explorer protocol: messages are validated on arrival', () => {
  const q = { filter: {}, sort: { column: 'reward', descending: true }, offset: 0, limit: 200, withHistogram: true };
  it('accepts a well-formed query', () => assert.ok(QuerySchema.safeParse(q).success));
  it('rejects unknown columns, fractional offsets, huge pages, unknown keys and long search terms', () => {
    assert.ok(!QuerySchema.safeParse({ ...q, sort: { column: 'prompt; drop table rollouts', descending: false } }).success);
    assert.ok(!QuerySchema.safeParse({ ...q, offset: 1.5 }).success);
    assert.ok(!QuerySchema.safeParse({ ...q, limit: 1_000_000 }).success);
    assert.ok(!QuerySchema.safeParse({ ...q, extra: 1 }).success);
    assert.ok(!QuerySchema.safeParse({ ...q, filter: { search: 'x'.repeat(201) } }).success);
    assert.ok(!MoreTextSchema.safeParse({ id: 1, part: { kind: 'prompt' }, offset: 0 }).success);
    assert.ok(MoreTextSchema.safeParse({ id: 1, part: { kind: 'message', index: 3 }, offset: 16000 }).success);
  });
  it('accepts the command arguments the Findings view passes', () => {
    assert.ok(OpenExplorerArgsSchema.safeParse({ failureMode: 'leak' }).success);
    assert.ok(!OpenExplorerArgsSchema.safeParse({ rolloutId: 'x' }).success);
  });
});

describe('explorer table cells and headings', () => {
  it('show every untrusted value without a raw control, escapes dropped and controls visible, on one line', () => {
    const hostile = `${ANSI_TEXT}\u009b2J\u007f\nnext\u0000`;
    const row: ExplorerRow = { id: 7, run_id: hostile, version: hostile, step: 3, split: 'train', failure_mode: `mode_${hostile}`, correct: false, reward: 0.5, num_turns: 2, response_tokens: 10, stop_reason: hostile, prompt_id: hostile, preview: hostile };
    for (const key of EXPLORER_COLUMNS) {
      const text = cellText(row, key);
      assert.doesNotMatch(text, /[\u0000-\u001f\u007f-\u009f]/, `${key}: ${JSON.stringify(text)}`);
    }
    assert.equal(cellText(row, 'run_id'), 'RED-ALERT plain after-title⟨U+007F⟩ next⟨U+0000⟩');
    assert.equal(plainText('bell\u0007 csi\u009b31m'), 'bell⟨U+0007⟩ csi');
    assert.equal(cellText({ ...row, stop_reason: null }, 'stop_reason'), '—');
  });
});
