import { html } from 'lit';
import { splitHidden } from '../../viewer/hidden';

export { markHidden } from '../../viewer/hidden';

/**
 * Untrusted text (rollout text, file, run and version names, messages quoting them) for a
 * Lit text binding: as it is when it holds no hidden character, else with each
 * bidirectional override, zero-width or control character shown as a marked code point
 * (`⟨U+202E⟩`, styled by appStyles' `.hidden-char`, its name in the tooltip), so that what
 * is read is what the text holds, in its logical order. Where only a string fits (an
 * attribute, an option label), use markHidden.
 */
export function shown(s: string | null | undefined): unknown {
  if (s === null || s === undefined) return '';
  const parts = splitHidden(s);
  if (parts.length === 1 && typeof parts[0] === 'string') return s;
  return parts.map((p) => (typeof p === 'string' ? p : html`<span class="hidden-char" title=${p.title}>${p.mark}</span>`));
}
