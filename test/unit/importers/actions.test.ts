import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyCommand } from '../../../src/core/store/importers/actions';

describe('what a shell command does', () => {
  it('counts edits made through scripts as edits, whatever the tool', () => {
    const edits = [
      "cat <<'EOF' > src/fix.py\nx = 1\nEOF",
      'cat > a.py << EOF\nx = 1\nEOF',
      "cd /testbed && cat >> setup.cfg <<'EOF'\n[flake8]\nEOF",
      'tee a.py <<EOF\nx\nEOF',
      "echo 'x = 1' | tee -a pkg/mod.py",
      "sed -i 's/a/b/' f.py",
      "sed -i.bak 's/a/b/' f.py",
      "cd /testbed && sed -E -i 's/(a)/\\1b/' astropy/modeling/separable.py",
      "sed --in-place -e 's/a/b/' f.py",
      "sed -e 's/a/b/' -i f.py",
      "perl -pi -e 's/a/b/' f.py",
      "perl -i -pe 's/a/b/' f.py",
      "perl -0777 -i -pe 's/a\\nb/c/' f.py",
      "python3 - <<'EOF'\nfrom pathlib import Path\np = Path('a.py')\np.write_text(p.read_text().replace('x', 'y'))\nEOF",
      "python -c \"open('a.py', 'w').write('x')\"",
      'python - <<EOF\nwith open(path, "a") as f:\n    f.write("x")\nEOF',
      "python -c \"f = open('a.py', 'r+'); f.write('x')\"",
      "python -c \"open('x.bin', 'wb').write(b'')\"",
      "python -c \"import pathlib; pathlib.Path('a.py').write_bytes(b'x')\"",
      "printf 'x' >> notes.txt",
      'echo "fix" > src/a.py',
      'git apply fix.diff',
      'patch -p1 < fix.diff',
    ];
    for (const c of edits) assert.equal(classifyCommand(c), 'edit', c);
  });

  it('does not take reading for editing', () => {
    const reads: [string, string][] = [
      ["sed -n '1,20p' a.py", 'search'],
      ['cat a.py', 'search'],
      ['grep -in foo a.py', 'search'],
      ["grep -rn 'sed -i' .", 'search'],
      ["perl -ne 'print if /x/' a.py", 'command'],
      ["python -c \"print(open('a.py').read())\"", 'search'],
      ["python -c \"print(open('a.py', 'r').read())\"", 'search'],
      ['ls > /dev/null 2>&1', 'search'],
      ["find . -name '*.py' | head", 'search'],
      ["sed -n '/-i/p' a.py", 'search'],
    ];
    for (const [c, kind] of reads) assert.equal(classifyCommand(c), kind, c);
  });

  it('still puts tests and submissions first', () => {
    assert.equal(classifyCommand("cat > test_fix.py <<'EOF'\nassert True\nEOF\npython -m pytest test_fix.py"), 'test');
    assert.equal(classifyCommand('echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff'), 'submit');
  });
});
