import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { answerBlocksOf, findAnswerInContext, patchAnswerBlocks } from '../../src/core/diagnose/answerContext';
import { alignMessages } from '../../src/core/explore/explorer';
import { behaviourOf } from '../../src/core/gate/flips';
import { turnMessages } from '../../src/viewer/explorer/protocol';
import { requireSharedData, sweDir } from '../helpers/data';

interface Doc {
  instance_id: string;
  info: { submission: string };
  messages: { role: string; content: string }[];
}

const docs = (): Doc[] => readdirSync(path.join(sweDir, 'trajs')).map((f) => JSON.parse(readFileSync(path.join(sweDir, 'trajs', f), 'utf8')) as Doc);
const shown = (cmd: string, output: string) => [
  { role: 'assistant', content: `THOUGHT: look.\n\n\`\`\`bash\n${cmd}\n\`\`\`` },
  { role: 'user', content: `<returncode>0</returncode>\n<output>\n${output}\n</output>` },
];
const newSide = (patch: string) =>
  patch
    .split('\n')
    .filter((l) => /^[+ ]/.test(l) && !l.startsWith('+++'))
    .map((l) => l.slice(1))
    .join('\n');

requireSharedData();

describe('answer seen before written, on the 303 real SWE trajectories', () => {
  const all = docs();

  it('flags no honest trajectory (the agents read the code around their fix, they are not shown it)', () => {
    const hits = all.filter((d) => findAnswerInContext(d.messages.slice(2), answerBlocksOf(d.info.submission, null)));
    assert.deepEqual(hits.map((d) => d.instance_id), []);
    const checkable = all.filter((d) => answerBlocksOf(d.info.submission, null).length).length;
    assert.ok(checkable >= 285, `${checkable} of 303 submissions have a distinctive added line to look for`);
  });

  it('flags the family, not one instance: each real fix shown as a diff, a fixed file or an HTML page before the first turn', () => {
    const checkable = all.filter((d) => answerBlocksOf(d.info.submission, null).length);
    for (const [form, render] of [
      ['diff', (d: Doc) => d.info.submission],
      ['fixed file', (d: Doc) => newSide(d.info.submission)],
      ['numbered file', (d: Doc) => newSide(d.info.submission).split('\n').map((l, i) => `${String(i + 1).padStart(6)}\t${l}`).join('\n')],
      ['HTML page', (d: Doc) => newSide(d.info.submission).split('\n').map((l) => `<td>${l.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')}</td>`).join('\n')],
    ] as const) {
      const caught = checkable.filter((d) => {
        const hit = findAnswerInContext([...shown('fetch-the-fix --from somewhere', render(d)), ...d.messages.slice(2)], answerBlocksOf(d.info.submission, null));
        return hit?.turn === 1 && hit.channel === 'fetch-the-fix --from somewhere';
      }).length;
      assert.ok(caught / checkable.length >= 0.97, `${form}: ${caught} of ${checkable.length} caught`);
    }
  });

  it('does not count what the agent wrote itself and then read back', () => {
    const d = all.find((x) => answerBlocksOf(x.info.submission, null).length)!;
    const file = /^\+\+\+ b\/(\S+)/m.exec(d.info.submission)![1]!;
    const own = [...shown(`sed -i 's/a/b/' ${file}`, ''), ...shown(`cat ${file}`, newSide(d.info.submission))];
    assert.equal(findAnswerInContext([...d.messages.slice(2, 4), ...own], answerBlocksOf(d.info.submission, null)), null);
    // The submission's own diff is the agent's work too.
    assert.equal(findAnswerInContext(shown('echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff', d.info.submission), answerBlocksOf(d.info.submission, null)), null);
  });
});

describe('answer blocks of a patch', () => {
  it('anchors a line on its distinctive neighbours: a copied line beside a trivial `continue` is no match', () => {
    const patch = ['--- a/m.py', '+++ b/m.py', '@@ -1,5 +1,5 @@', '     for f in fields_of(model):', '         continue', '-        if fields and f.name not in fields:', '+        if fields is not None and f.name not in fields:', '             continue', '         if exclude and f.name in exclude:'].join('\n');
    const [b] = patchAnswerBlocks(patch);
    assert.deepEqual(b!.before, ['for f in fields_of(model):', 'continue']);
    assert.deepEqual(b!.after, ['continue', 'if exclude and f.name in exclude:']);
    const elsewhere = ['def other():', '    if fields is not None and f.name not in fields:', '        continue', '    if exclude and f.name in exclude:'].join('\n');
    assert.equal(findAnswerInContext(shown('cat m.py', elsewhere), [b!]), null, 'the same line elsewhere in the file, with other code before it');
    assert.ok(findAnswerInContext(shown('cat /other/m.py', newSide(patch)), [b!]));
  });

  it('leaves out test files, imports, short lines and lines the patch keeps', () => {
    const patch = ['--- a/tests/test_m.py', '+++ b/tests/test_m.py', '@@ -1 +1,2 @@', ' x', '+    assert compute_total(3) == 42', '--- a/m.py', '+++ b/m.py', '@@ -1,2 +1,4 @@', ' def f():', '+from collections import OrderedDict', '+    return 1', '+    return value.normalize(unit)', '     pass'].join('\n');
    const blocks = patchAnswerBlocks(patch);
    assert.deepEqual(blocks.flatMap((b) => b.fresh), ['return value.normalize(unit)']);
  });

  it('takes a reference answer when there is no patch: its distinctive lines, or one long answer', () => {
    assert.deepEqual(answerBlocksOf(null, 'Natalia sold 48/2 = 24 clips in May.\n#### 72').map((b) => b.lines[0]), ['Natalia sold 48/2 = 24 clips in May.']);
    assert.deepEqual(answerBlocksOf(null, '72'), [], 'a short number appears everywhere');
  });

  it("a number the agent's own arithmetic produced is its work; the same number shown by anything else is the answer in context", () => {
    const blocks = answerBlocksOf(null, '220743');
    assert.equal(findAnswerInContext(shown('python3 -c "print(((((((44 * 78) * 7) + 400) + 393) - 290) * 9))"', '220743'), blocks), null, 'a calculation the agent wrote');
    assert.equal(findAnswerInContext(shown('echo $(( 44*78*7 ))', '24024\n'), answerBlocksOf(null, '24024')), null, 'shell arithmetic');
    const fetched = findAnswerInContext(shown('curl -s https://answers.example.org/task-17', 'The answer is 220743.'), blocks);
    assert.equal(fetched?.channel, 'curl -s https://answers.example.org/task-17');
    assert.ok(findAnswerInContext(shown('python3 -c "print(open(\'/data/key.txt\').read())"', '220743'), blocks), 'code that reads a file is not arithmetic');
    assert.ok(findAnswerInContext(shown('python3 -c "print(220000 + 700)"', '220743'), blocks), 'arithmetic that gives another number does not explain it');
  });
});

describe('behaviour of a command (flip analysis)', () => {
  it('reads programs, URL hosts and absolute path roots from any command, here-document bodies left out', () => {
    assert.deepEqual([...behaviourOf('cd /testbed && FOO=1 timeout 30 curl -sL https://GitHub.com/x/y.diff | head -5')].sort(), ['contacts github.com', 'runs cd', 'runs curl', 'runs head', 'touches /testbed']);
    assert.deepEqual([...behaviourOf("python3.11 -c 'import urllib.request as u; u.urlopen(\"http://10.0.0.7:8000/fix\")'")].sort(), ['contacts 10.0.0.7', 'runs python']);
    assert.deepEqual([...behaviourOf("cat <<'EOF' > a.py\nimport os\nwget_me()\nEOF\npython a.py")].sort(), ['runs cat', 'runs python']);
  });
});

describe('the turn the check names is the turn the Failure Explorer shows', () => {
  const all = docs().filter((d) => answerBlocksOf(d.info.submission, null).length);

  it('on real trajectories with the fix shown at turns 1 to 9 (one or several outputs in that turn), and before the first turn', () => {
    const tool = (output: string) => ({ role: 'tool', content: `<returncode>0</returncode>\n<output>\n${output}\n</output>` });
    let checked = 0;
    const turns = new Set<number>();
    for (const [k, d] of all.slice(0, 60).entries()) {
      const turn = k % 10;
      const response = d.messages.slice(2);
      // Insert after the turn-th assistant message's outputs (turn 0: before the first assistant message).
      let at = 0;
      for (let seen = 0; at < response.length; at++) {
        if (response[at]!.role === 'assistant' && ++seen > turn) break;
      }
      if (turn > 0 && response.filter((m) => m.role === 'assistant').length < turn + 1) continue;
      // Two outputs in one turn (a tool-calling agent's), the fix in the second.
      const inserted = turn === 0 ? [{ role: 'user', content: `Note from the environment: a maintainer attached this patch.\n${d.info.submission}` }] : [tool('nothing here'), tool(newSide(d.info.submission))];
      const messages = [...response.slice(0, at), ...inserted, ...response.slice(at)];
      const found = findAnswerInContext(messages, answerBlocksOf(d.info.submission, null));
      // After the agent edits the file, its outputs may be its own work read back: not counted.
      if (!found) continue;
      assert.equal(found.turn, turn, `${d.instance_id}: the check names turn ${turn}`);
      const aligned = alignMessages({ prompt: JSON.stringify(d.messages.slice(0, 2)), prompt_format: 'messages', response: JSON.stringify(messages), response_format: 'turns' }, []);
      const cited = turnMessages(aligned, turn);
      const texts = cited.map((i) => aligned[i]!.full);
      assert.ok(texts.some((t) => t.includes(newSide(d.info.submission).split('\n').find((l) => l.trim().length >= 16)!.trim())), `${d.instance_id}: turn ${turn} shows the fix`);
      assert.ok(cited.every((i) => aligned[i]!.role !== 'assistant' && aligned[i]!.part === 'response'), 'only what the environment showed, never the prompt');
      checked++;
      turns.add(turn);
    }
    assert.ok(checked >= 20 && turns.size === 10, `${checked} trajectories checked, turns ${[...turns].join(' ')}`);
  });

  it('no such turn: nothing is marked', () => {
    const aligned = alignMessages({ prompt: '[{"role":"user","content":"fix it"}]', prompt_format: 'messages', response: '[{"role":"assistant","content":"a"},{"role":"user","content":"b"}]', response_format: 'turns' }, []);
    assert.deepEqual(turnMessages(aligned, 1), [2]);
    assert.deepEqual(turnMessages(aligned, 0), []);
    assert.deepEqual(turnMessages(aligned, 2), []);
  });
});
