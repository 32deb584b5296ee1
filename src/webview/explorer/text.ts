/**
 * Rollout text is untrusted. It is only ever rendered through Lit text bindings; this
 * module turns it into plain segments first: ANSI colour codes become style classes
 * (from a fixed list), every other escape sequence is dropped, and other control
 * characters, bidirectional overrides and zero-width characters are shown as marked code
 * points (`⟨U+202E⟩`, see shared/hidden.ts). Markup is built only from those segments.
 */
import { html } from 'lit';
import type { ExplorerColumn, ExplorerRow } from '../../viewer/explorer/protocol';
import { describeHidden, hiddenMark, splitHidden } from '../../viewer/hidden';

export interface Segment {
  text: string;
  /** Class names from a fixed vocabulary: ansi-fg-N, ansi-bg-N (N 0..15), ansi-bold, ansi-dim, ansi-italic, ansi-underline, hidden-char. */
  classes: string;
  /** A hidden character's code point and name (on hidden-char segments). */
  title?: string;
}

interface Sgr {
  fg: number | null;
  bg: number | null;
  bold: boolean;
  dim: boolean;
  italic: boolean;
  underline: boolean;
}

const PLAIN: Sgr = { fg: null, bg: null, bold: false, dim: false, italic: false, underline: false };

function classesOf(s: Sgr): string {
  const c: string[] = [];
  if (s.fg !== null) c.push(`ansi-fg-${s.fg}`);
  if (s.bg !== null) c.push(`ansi-bg-${s.bg}`);
  if (s.bold) c.push('ansi-bold');
  if (s.dim) c.push('ansi-dim');
  if (s.italic) c.push('ansi-italic');
  if (s.underline) c.push('ansi-underline');
  return c.join(' ');
}

function applySgr(state: Sgr, params: string): Sgr {
  const s = { ...state };
  const codes = params === '' ? [0] : params.split(/[;:]/).map((p) => (p === '' ? 0 : Number(p)));
  for (let i = 0; i < codes.length; i++) {
    const n = codes[i]!;
    if (n === 0) Object.assign(s, PLAIN);
    else if (n === 1) s.bold = true;
    else if (n === 2) s.dim = true;
    else if (n === 3) s.italic = true;
    else if (n === 4) s.underline = true;
    else if (n === 22) s.bold = s.dim = false;
    else if (n === 23) s.italic = false;
    else if (n === 24) s.underline = false;
    else if (n >= 30 && n <= 37) s.fg = n - 30;
    else if (n >= 90 && n <= 97) s.fg = n - 90 + 8;
    else if (n === 39) s.fg = null;
    else if (n >= 40 && n <= 47) s.bg = n - 40;
    else if (n >= 100 && n <= 107) s.bg = n - 100 + 8;
    else if (n === 49) s.bg = null;
    else if (n === 38 || n === 48) {
      // 256-colour and true-colour forms: mapped onto the 16 theme colours where they can be, else ignored.
      const mode = codes[i + 1];
      if (mode === 5) {
        const idx = codes[i + 2] ?? 0;
        if (idx < 16) {
          if (n === 38) s.fg = idx;
          else s.bg = idx;
        }
        i += 2;
      } else if (mode === 2) {
        i += 4;
      }
    }
  }
  return s;
}

// CSI (ESC [ … final byte), OSC (ESC ] … BEL or ESC \), other two-byte escapes, and lone control characters.
const TOKEN = /\u001b\[([0-?]*)([ -/]*)([@-~])|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-Z\\-_]?|\u009b[0-?]*[ -/]*[@-~]|[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Splits text into styled segments; the text of every segment is shown literally. */
export function ansiSegments(raw: string): Segment[] {
  // Line ends as terminals show them: CRLF and a lone CR (progress bars redrawing a line) start a new line.
  const text = raw.replace(/\r\n?/g, '\n');
  const out: Segment[] = [];
  let state = PLAIN;
  let last = 0;
  const add = (t: string, classes: string) => {
    if (!t) return;
    const prev = out[out.length - 1];
    if (prev && prev.classes === classes) prev.text += t;
    else out.push({ text: t, classes });
  };
  const hidden = (ch: string) => out.push({ text: hiddenMark(ch), classes: 'hidden-char', title: describeHidden(ch) });
  // Text between escapes: its format characters (bidi overrides, zero-width) each become a mark.
  const push = (t: string, classes: string) => {
    for (const p of splitHidden(t)) {
      if (typeof p === 'string') add(p, classes);
      else hidden(p.hidden);
    }
  };
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(text); m; m = TOKEN.exec(text)) {
    push(text.slice(last, m.index), classesOf(state));
    last = m.index + m[0].length;
    const tok = m[0];
    if (tok.startsWith('\u001b[')) {
      if (m[3] === 'm' && !m[2]) state = applySgr(state, m[1] ?? '');
      // every other CSI (cursor moves, clears) is dropped
    } else if (tok.length === 1 && tok !== '\u001b') {
      hidden(tok);
    }
  }
  push(text.slice(last), classesOf(state));
  return out;
}

/**
 * Untrusted text for one line of the page where only a string fits (tooltips, option
 * labels): escape sequences dropped and hidden characters as their marks, as in the text
 * panes, and whitespace runs (newlines too) made one space.
 */
export function plainText(raw: string): string {
  return ansiSegments(raw)
    .map((s) => s.text)
    .join('')
    .replace(/\s+/g, ' ');
}

/** The same one line for a text binding (table cells, run names, headings): the marks styled, as in the text panes. */
export function plainView(raw: string): unknown {
  const segs = ansiSegments(raw);
  if (!segs.some((s) => s.title)) return plainText(raw);
  return segs.map((s) => (s.title ? html`<span class="hidden-char" title=${s.title}>${s.text}</span>` : s.text.replace(/\s+/g, ' ')));
}

/** A failure-mode name as a label. */
export function modeLabel(mode: string): string {
  return mode.replace(/_/g, ' ');
}

/** The raw text of a table cell of the rollout list. */
function cellRaw(r: ExplorerRow, key: ExplorerColumn): string | null {
  const v = r[key];
  if (v === null || v === undefined) return null;
  if (key === 'reward' && typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toFixed(3);
  if (key === 'failure_mode') return modeLabel(String(v));
  if (key === 'prompt_id') return `${r.prompt_id}  ${r.preview}`;
  return String(v);
}

/** A table cell of the rollout list: every value shown as plain one-line text. */
export function cellText(r: ExplorerRow, key: ExplorerColumn): string {
  const raw = cellRaw(r, key);
  return raw === null ? '—' : plainText(raw);
}

/** A table cell for its text binding: as cellText, hidden characters' marks styled. */
export function cellView(r: ExplorerRow, key: ExplorerColumn): unknown {
  const raw = cellRaw(r, key);
  return raw === null ? '—' : plainView(raw);
}

export type DiffLineKind = 'add' | 'del' | 'hunk' | 'meta' | 'context';

export function diffLineKind(line: string): DiffLineKind {
  if (line.startsWith('+++ ') || line.startsWith('--- ') || line.startsWith('diff --git ') || line.startsWith('index ') || line.startsWith('new file mode') || line.startsWith('deleted file mode')) return 'meta';
  if (line.startsWith('@@')) return 'hunk';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'del';
  return 'context';
}

/** Lines of a diff with their kind; a line too long to show whole is cut (the text stays paged). */
export function diffLines(text: string, maxLine = 2_000): { text: string; kind: DiffLineKind }[] {
  return text.split('\n').map((l) => ({ text: l.length > maxLine ? `${l.slice(0, maxLine)}… (${l.length - maxLine} more characters on this line)` : l, kind: diffLineKind(l) }));
}

export function formatCount(n: number): string {
  return n.toLocaleString('en');
}

export function formatChars(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)} M characters`;
  if (n >= 10_000) return `${Math.round(n / 1000)} k characters`;
  return `${formatCount(n)} characters`;
}
