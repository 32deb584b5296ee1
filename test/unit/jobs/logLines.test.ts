import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JobLogView, LogLines } from '../../../src/core/jobs/logLines';

const all = (l: LogLines, chunks: string[]) => chunks.map((c) => l.write(c)).join('') + l.end();

describe('job logs as a terminal shows them', () => {
  const bar = 'epoch 1\n\r  0%|          |\r 50%|#####     |\r100%|##########|\nstep:1 - actor/entropy:0.5\r\ndone';

  it("keeps a redrawn line's last segment; CRLF ends a line; a line with no end is flushed at the end", () => {
    assert.equal(all(new LogLines(), [bar]), 'epoch 1\n100%|##########|\nstep:1 - actor/entropy:0.5\ndone\n');
    const l = new LogLines();
    assert.equal(l.write('a\rb'), '');
    assert.equal(l.pending(), 'b', 'the line being drawn, as shown now');
    assert.equal(l.write('\r'), '');
    assert.equal(l.pending(), 'b', 'a CR alone does not blank the line: the next text redraws it');
    assert.equal(l.write('\n'), 'b\n', 'CR then LF in two chunks is a CRLF');
  });

  it('gives the same lines however the stream is cut, down to one character a chunk', () => {
    const whole = all(new LogLines(), [bar]);
    for (let cut = 1; cut < bar.length; cut++) assert.equal(all(new LogLines(), [bar.slice(0, cut), bar.slice(cut)]), whole, `cut at ${cut}`);
    assert.equal(all(new LogLines(), [...bar]), whole);
  });

  it('cuts a long line and says how much is hidden, holding at most the cap while it grows', () => {
    const l = new LogLines(100);
    for (let i = 0; i < 1000; i++) l.write('x'.repeat(10_000)); // 10 M characters with no line end
    assert.equal(l.pending(), `${'x'.repeat(100)}… (9999900 more characters on this line)`);
    l.write('\rshort');
    assert.equal(l.end(), 'short\n', 'a redraw replaces even a cut line');
  });

  it('an array job: lines per task, each prefixed, never mixed; escapes dropped and hidden characters marked', () => {
    const v = new JobLogView(true);
    assert.equal(v.write('0', 'task zero 10%\rtask zero 9'), '');
    assert.equal(v.write('1', 'one \u001b[31mred\u001b[0m \u202Eevil\n'), '[1] one red ⟨U+202E⟩evil\n');
    assert.equal(v.write('0', '9%\n'), '[0] task zero 99%\n');
    assert.equal(v.write('1', 'tail'), '');
    assert.equal(v.pending('1'), '[1] tail');
    assert.equal(v.end(), '[1] tail\n');
    assert.equal(new JobLogView(false).write('', 'plain\n'), 'plain\n');
  });
});
