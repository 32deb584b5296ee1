import { CONTROL_SOURCE, FORMAT_SOURCE } from './hidden';

/**
 * Rollout text is untrusted: a model can emit ANSI escapes that recolour, move the
 * cursor or retitle a terminal, and bidirectional overrides or zero-width characters that
 * make a line read other than it is (see hidden.ts). Before printing, control characters
 * other than newline and tab become visible escapes: `\x1b` for C0 controls, `\u009b` for
 * DEL and the C1 controls, `\u202e` for the invisible format characters (JSON.stringify
 * leaves those raw, and the \u form keeps such JSON valid and its strings exact).
 */
export function sanitizeForTerminal(s: string): string {
  return s.replace(CONTROL, visible);
}

const CONTROL = new RegExp(`${CONTROL_SOURCE}|${FORMAT_SOURCE}`, 'g');
/** As CONTROL, but a carriage return that ends the text or a line passes (a progress line redrawn, CRLF). */
const CONTROL_BUT_REDRAW = new RegExp(`[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]|\\r(?!\\n|$)|${FORMAT_SOURCE}`, 'g');

/** One escape per UTF-16 unit: a tag character's surrogate pair stays valid JSON. */
function visible(c: string): string {
  let out = '';
  for (let i = 0; i < c.length; i++) {
    const code = c.charCodeAt(i);
    out += code < 0x7f ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  }
  return out;
}

/**
 * What may reach a terminal of anything the command line prints: the CLI passes every
 * write to stdout and stderr through this, so untrusted text (group ids built from a
 * data source, run names, file names, error messages quoting a record) cannot drive the
 * terminal whichever command prints it. Output is unchanged unless it holds controls.
 */
export function terminalSafe(s: string): string {
  return s.replace(CONTROL_BUT_REDRAW, visible);
}

/** One line, at most `max` characters, for tables. */
export function preview(s: string | null | undefined, max = 60): string {
  if (!s) return '';
  const flat = sanitizeForTerminal(s).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
