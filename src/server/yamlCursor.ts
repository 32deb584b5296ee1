/**
 * Where the cursor is in a YAML document that is being typed (and so often does not
 * parse): read from indentation and the current line, the way the user sees it.
 */
export interface YamlCursor {
  /** Keys of the enclosing block mappings, outermost first (sequence items are transparent). */
  path: string[];
  /** In a value: the key it belongs to (for a "- item" line, the key of the sequence). */
  key?: string;
  inValue: boolean;
  /** Inside a `{...}` flow mapping on this line. */
  flow: boolean;
  /** An item of a block sequence ("- …"). */
  seqItem: boolean;
  /** What is typed of the word at the cursor (quotes stripped). */
  prefix: string;
}

const KEY_LINE = /^(\s*)((?:-\s+)*)([^\s#:'"{[][^:#]*?|'[^']*'|"[^"]*")\s*:(?:\s|$)/;

const unquote = (s: string) => s.replace(/^['"]|['"]$/g, '');

interface LineShape {
  /** Column of the line's first character. */
  ws: number;
  /** Column where its content (after any "- ") starts. */
  content: number;
  dash: boolean;
  key?: string;
}

function shape(line: string): LineShape | null {
  if (!line.trim() || /^\s*#/.test(line)) return null;
  const d = /^(\s*)((?:-(?:\s+|$))*)/.exec(line)!;
  const m = KEY_LINE.exec(line);
  return { ws: d[1]!.length, content: d[1]!.length + d[2]!.length, dash: d[2]!.length > 0, ...(m ? { key: unquote(m[3]!.trim()) } : {}) };
}

export function yamlCursor(lines: string[], line: number, character: number): YamlCursor {
  const full = lines[line] ?? '';
  const before = full.slice(0, character);
  const lead = /^(\s*)((?:-\s+)*)/.exec(before)!;
  const indent = lead[1]!.length;
  const dashes = lead[2]!;
  const contentIndent = indent + dashes.length;
  // Enclosing keys: lines above whose content starts left of the cursor's. Below a
  // sequence item ("- "), its parent key may sit in the dash's own column.
  const path: string[] = [];
  let limit = dashes ? indent + 0.5 : contentIndent;
  let seqItem = dashes.length > 0;
  for (let i = line - 1; i >= 0 && limit > 0; i--) {
    const s = shape(lines[i]!);
    if (!s) continue;
    if (s.content < limit) {
      if (s.key !== undefined) path.unshift(s.key);
      limit = s.dash ? s.ws + 0.5 : s.content;
    } else if (s.dash && s.ws < limit) {
      // "- key: x" above, the cursor's key its sibling: the cursor is in that item.
      seqItem = true;
      limit = s.ws + 0.5;
    }
  }
  const rest = before.slice(contentIndent);
  // A flow mapping open on this line: look at its last entry.
  const open = rest.lastIndexOf('{');
  if (open !== -1 && rest.indexOf('}', open) === -1) {
    const owner = /^(?:-\s+)*([\w.-]+)\s*:\s*\[?\s*$/.exec(rest.slice(0, open).trim());
    if (owner) path.push(owner[1]!);
    const entry = rest.slice(open + 1).split(',').pop()!;
    const kv = /^\s*([\w.-]+)\s*:\s*(.*)$/.exec(entry);
    if (kv) return { path, key: kv[1]!, inValue: true, flow: true, seqItem, prefix: unquote(kv[2]!.trim()) };
    return { path, inValue: false, flow: true, seqItem, prefix: entry.trim() };
  }
  const kv = /^([^\s#:'"][^:#]*?|'[^']*'|"[^"]*")\s*:(?:\s+(.*))?$/.exec(rest);
  if (kv && (kv[2] !== undefined || rest.endsWith(':'))) {
    if (kv[2] === undefined) return { path, inValue: false, flow: false, seqItem, prefix: '' };
    return { path, key: unquote(kv[1]!.trim()), inValue: true, flow: false, seqItem, prefix: unquote(kv[2].trim()) };
  }
  if (dashes) {
    // "- partial": an item of the sequence under the enclosing key.
    const key = path.pop();
    return { path, key, inValue: true, flow: false, seqItem: true, prefix: unquote(rest.trim()) };
  }
  return { path, inValue: false, flow: false, seqItem, prefix: rest.trim() };
}
