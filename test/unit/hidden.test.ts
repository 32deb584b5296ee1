import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeHidden, hasHidden, markHidden, splitHidden } from '../../src/core/util/hidden';
import { preview, sanitizeForTerminal, terminalSafe } from '../../src/core/util/text';
import { ansiSegments, cellText, plainText } from '../../src/webview/explorer/text';
import { EXPLORER_COLUMNS, type ExplorerRow } from '../../src/core/explore/types';
import { shown } from '../../src/webview/shared/hidden';

/** A "Trojan Source" line: shown, it reads as a check for a normal user; its logical order grants admin. */
const TROJAN = 'if access_level != "user\u202E \u2066// Check if admin\u2069 \u2066" {';
const EVERY = ['\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069', '\u200B', '\u200C', '\u200D', '\u200E', '\u200F', '\uFEFF', '\u061C', '\u2060', '\u00AD', '\u0007', '\u001b', '\u007f', '\u0085', '\u009b', '\u{E0041}'];

describe('hidden characters in untrusted text', () => {
  it('finds every bidirectional control, zero-width character, BOM, tag character and C0/C1 control, and nothing else', () => {
    for (const ch of EVERY) assert.ok(hasHidden(`a${ch}b`), `${describeHidden(ch)} is hidden`);
    for (const fine of ['plain ascii', 'tab\tand\nnewline', 'café — ü ✓ 😀', 'עברית العربية', '\u{1F468}']) assert.ok(!hasHidden(fine), fine);
  });

  it('cuts text into runs and marks in logical order, the stored text recoverable', () => {
    const parts = splitHidden(TROJAN);
    assert.deepEqual(parts.filter((p) => typeof p !== 'string').map((p) => (p as { mark: string }).mark), ['⟨U+202E⟩', '⟨U+2066⟩', '⟨U+2069⟩', '⟨U+2066⟩']);
    assert.equal(parts.map((p) => (typeof p === 'string' ? p : p.hidden)).join(''), TROJAN, 'nothing is lost');
    assert.deepEqual(splitHidden('clean'), ['clean']);
    assert.equal((splitHidden('\u202E')[0] as { title: string }).title, 'U+202E RIGHT-TO-LEFT OVERRIDE');
    assert.equal(markHidden('x\u{E0041}y'), 'x⟨U+E0041⟩y', 'a tag character is one mark, not two halves');
    assert.equal(markHidden(TROJAN), 'if access_level != "user⟨U+202E⟩ ⟨U+2066⟩// Check if admin⟨U+2069⟩ ⟨U+2066⟩" {');
    assert.ok(!hasHidden(markHidden(TROJAN)));
  });

  it('the terminal sees escapes; JSON printed through it parses back to the exact strings', () => {
    assert.equal(sanitizeForTerminal('a\u202Eb\u200Bc\uFEFF'), 'a\\u202eb\\u200bc\\ufeff');
    assert.equal(terminalSafe('run\u2067x\u2069 done\r\n'), 'run\\u2067x\\u2069 done\r\n');
    const value = { response: TROJAN, tag: 'x\u{E0041}y', bell: '\u0007' };
    const printed = terminalSafe(JSON.stringify(value));
    assert.ok(!hasHidden(printed.replace(/\r\n/g, '')), printed);
    assert.deepEqual(JSON.parse(printed), value);
    assert.equal(preview('a\u202E\nb'), 'a\\u202e b');
  });

  it('the explorer shows each hidden character as a marked code point with its name, ANSI still styled', () => {
    const segs = ansiSegments(`x\u001b[31m${TROJAN}\u001b[0m\u0007`);
    const marks = segs.filter((s) => s.classes === 'hidden-char');
    assert.deepEqual(marks.map((s) => s.text), ['⟨U+202E⟩', '⟨U+2066⟩', '⟨U+2069⟩', '⟨U+2066⟩', '⟨U+0007⟩']);
    assert.equal(marks[0]!.title, 'U+202E RIGHT-TO-LEFT OVERRIDE');
    assert.ok(segs.some((s) => s.classes === 'ansi-fg-1' && s.text.startsWith('if access_level')));
    assert.ok(!segs.some((s) => hasHidden(s.text)), 'no segment holds a hidden character');
    assert.equal(plainText('run\u202Eevil'), 'run⟨U+202E⟩evil');
    const row = Object.fromEntries(EXPLORER_COLUMNS.map((c) => [c, null])) as unknown as ExplorerRow;
    assert.equal(cellText({ ...row, run_id: 'r\u2066un' }, 'run_id'), 'r⟨U+2066⟩un');
  });

  it('the panels (Backtest Diff, evidence, health, lineage, curves) bind clean text as it is and wrap each hidden character in a marked span', () => {
    assert.equal(shown('plain task'), 'plain task', 'no template where there is nothing to mark');
    assert.equal(shown(null), '');
    const parts = shown('task\u202Eevil') as unknown[];
    assert.equal(parts.length, 3);
    assert.equal(parts[0], 'task');
    assert.equal(parts[2], 'evil');
    const span = parts[1] as { strings: readonly string[]; values: unknown[] };
    assert.match(span.strings.join(''), /<span class="hidden-char" title=/);
    assert.deepEqual(span.values, ['U+202E RIGHT-TO-LEFT OVERRIDE', '⟨U+202E⟩']);
  });
});
