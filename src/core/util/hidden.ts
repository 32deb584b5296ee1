/**
 * Characters a reader cannot see but that change what text says or how it is laid out:
 * bidirectional overrides and isolates (the "Trojan Source" reordering, which shows text in
 * an order other than the one it has), zero-width and other format characters, and the
 * C0 / C1 controls other than newline and tab. Rollout text, file names and run names are
 * untrusted, so everything that shows them makes these visible; the stored text is never
 * changed. Pure: the CLI, the host and the webviews (through src/viewer/hidden) share it.
 */

/** The named ones: bidirectional controls, the zero-width set and the byte-order mark. */
const NAMES: Record<number, string> = {
  0x00ad: 'SOFT HYPHEN',
  0x061c: 'ARABIC LETTER MARK',
  0x180e: 'MONGOLIAN VOWEL SEPARATOR',
  0x200b: 'ZERO WIDTH SPACE',
  0x200c: 'ZERO WIDTH NON-JOINER',
  0x200d: 'ZERO WIDTH JOINER',
  0x200e: 'LEFT-TO-RIGHT MARK',
  0x200f: 'RIGHT-TO-LEFT MARK',
  0x2028: 'LINE SEPARATOR',
  0x2029: 'PARAGRAPH SEPARATOR',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING',
  0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x2060: 'WORD JOINER',
  0x2061: 'FUNCTION APPLICATION',
  0x2062: 'INVISIBLE TIMES',
  0x2063: 'INVISIBLE SEPARATOR',
  0x2064: 'INVISIBLE PLUS',
  0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE',
  0x2069: 'POP DIRECTIONAL ISOLATE',
  0x3164: 'HANGUL FILLER',
  0xfeff: 'ZERO WIDTH NO-BREAK SPACE (BYTE ORDER MARK)',
};

/**
 * The format characters (everything hidden but the C0 / C1 controls), as regular-expression
 * source without the `u` flag: a tag character (U+E0000–U+E007F, text an LLM reads and a
 * person does not) is its surrogate pair.
 */
export const FORMAT_SOURCE = '[\\u00ad\\u061c\\u115f\\u1160\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2064\\u2066-\\u206f\\u3164\\ufeff\\uffa0\\ufff9-\\ufffb]|\\udb40[\\udc00-\\udc7f]';
/** C0 controls but tab and newline, DEL, and the C1 controls. */
export const CONTROL_SOURCE = '[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f]';

const HIDDEN = new RegExp(`${CONTROL_SOURCE}|${FORMAT_SOURCE}`, 'g');
const ANY_HIDDEN = new RegExp(`${CONTROL_SOURCE}|${FORMAT_SOURCE}`);

/** Whether the text holds a character the reader would not see. */
export function hasHidden(s: string): boolean {
  return ANY_HIDDEN.test(s);
}

/** `U+202E` for one hidden character (a surrogate pair read as its code point). */
export function codePointOf(ch: string): string {
  return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** What the character is, for a tooltip: `U+202E RIGHT-TO-LEFT OVERRIDE`. */
export function describeHidden(ch: string): string {
  const cp = ch.codePointAt(0)!;
  const name = NAMES[cp] ?? (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ? 'control character' : cp >= 0xe0000 ? 'TAG character (invisible text)' : 'invisible format character');
  return `${codePointOf(ch)} ${name}`;
}

/** The visible mark of one hidden character: `⟨U+202E⟩`. */
export function hiddenMark(ch: string): string {
  return `⟨${codePointOf(ch)}⟩`;
}

/** A piece of text shown as it is, or one hidden character to show as its mark. */
export type HiddenPart = string | { hidden: string; mark: string; title: string };

/**
 * The text cut into plain runs and hidden characters, in order; one plain run (the text
 * itself) when it holds none. `keep` leaves characters a view handles itself (say '\r').
 */
export function splitHidden(s: string, keep?: (ch: string) => boolean): HiddenPart[] {
  if (!ANY_HIDDEN.test(s)) return [s];
  const out: HiddenPart[] = [];
  let last = 0;
  HIDDEN.lastIndex = 0;
  for (let m = HIDDEN.exec(s); m; m = HIDDEN.exec(s)) {
    const ch = m[0];
    if (keep?.(ch)) continue;
    if (m.index > last) out.push(s.slice(last, m.index));
    out.push({ hidden: ch, mark: hiddenMark(ch), title: describeHidden(ch) });
    last = m.index + ch.length;
  }
  if (last < s.length) out.push(s.slice(last));
  return out;
}

/** The text with every hidden character as its mark (where only a plain string fits: a tooltip, an option label, a tab title). */
export function markHidden(s: string): string {
  return hasHidden(s) ? s.replace(HIDDEN, hiddenMark) : s;
}
