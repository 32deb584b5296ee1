/**
 * JSON as Python writes it. `json.dumps` defaults to `allow_nan=True` and writes a float
 * NaN or infinity as the bare tokens `NaN`, `Infinity`, `-Infinity`, which JSON.parse
 * rejects. Trainers dump rewards that way (a reward not computed is NaN), so a JSONL
 * importer retries a line that failed to parse with those tokens read as null.
 */

/** Parses `text`, reading bare NaN / Infinity / -Infinity (outside strings) as null. Null when it still fails. */
export function parsePythonJson(text: string): { value: unknown; nonFinite: number } | null {
  let out = '';
  let nonFinite = 0;
  let from = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
      continue;
    }
    const token = text.startsWith('NaN', i) ? 'NaN' : text.startsWith('-Infinity', i) ? '-Infinity' : text.startsWith('Infinity', i) ? 'Infinity' : null;
    if (token && !isWordChar(text.charCodeAt(i - 1)) && !isWordChar(text.charCodeAt(i + token.length))) {
      out += text.slice(from, i) + 'null';
      nonFinite++;
      i += token.length - 1;
      from = i + 1;
    }
  }
  if (!nonFinite) return null;
  try {
    return { value: JSON.parse(out + text.slice(from)), nonFinite };
  } catch {
    return null;
  }
}

function isWordChar(c: number): boolean {
  // NaN (c is NaN past either end of the text) compares false: an edge is a boundary.
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x2e;
}
