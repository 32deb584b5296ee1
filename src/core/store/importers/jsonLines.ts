import { readBytes } from '../compressed';
import { parsePythonJson } from './pythonJson';

export interface JsonLine {
  /** Parsed value, or undefined when the line is not valid JSON (see `error`). */
  value?: unknown;
  error?: string;
  /** The raw line (only kept for bad lines, for the quarantine table). */
  raw?: string;
  /** 1-based line number. */
  line: number;
  /** Byte offset just after this line's newline: where a follower resumes. */
  endOffset: number;
}

const NL = 0x0a;
const CR = 0x0d;
/** The longest line read: past it the line is a bad record (memory stays bounded whatever the input). */
export const MAX_LINE_BYTES = 256 * 1024 * 1024;

/**
 * Streams a JSONL file line by line from `startOffset`, memory bounded by the longest
 * line (10 MB lines are fine; one over `maxLineBytes` is reported as a bad line and
 * skipped without being held). Lines end with LF, CRLF or a lone CR; a UTF-8 byte-order
 * mark before the first line is dropped. Blank lines are skipped. `onChunk` sees every
 * byte read (the store hashes them in the same pass, and may throw to stop the read).
 * Python's bare NaN / Infinity tokens (what json.dumps writes for non-finite floats) read
 * as null. A last line with no line end is taken only when it parses: a run still
 * writing it is "not yet", not an error.
 */
export async function* readJsonLines(file: string, startOffset = 0, startLine = 1, onChunk?: (bytes: Buffer) => void, maxLineBytes = MAX_LINE_BYTES): AsyncGenerator<JsonLine> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  /** Bytes of the current line when it is over the limit (then nothing of it is held). */
  let overLong = 0;
  let offset = startOffset;
  let line = startLine;
  /** The previous chunk ended in CR: an LF starting this one belongs to that line end. */
  let afterCR = false;
  // (a compressed file's uncompressed bytes: its lines and offsets are those of the text it compresses)
  for await (const chunk of readBytes(file, startOffset)) {
    onChunk?.(chunk);
    let from = 0;
    if (afterCR && chunk.length && chunk[0] === NL) {
      from = 1;
      offset++;
    }
    afterCR = false;
    let nextNL = chunk.indexOf(NL, from);
    let nextCR = chunk.indexOf(CR, from);
    for (;;) {
      if (nextNL !== -1 && nextNL < from) nextNL = chunk.indexOf(NL, from);
      if (nextCR !== -1 && nextCR < from) nextCR = chunk.indexOf(CR, from);
      const end = nextNL === -1 ? nextCR : nextCR === -1 ? nextNL : Math.min(nextNL, nextCR);
      if (end === -1) break;
      // CRLF is one line end; a CR at the chunk's end may be followed by LF in the next chunk.
      const crlf = chunk[end] === CR && end + 1 < chunk.length && chunk[end + 1] === NL;
      if (chunk[end] === CR && end + 1 === chunk.length) afterCR = true;
      const terminator = crlf ? 2 : 1;
      const piece = chunk.subarray(from, end);
      let parsed: JsonLine | null;
      const lineStart = offset;
      if (overLong) {
        offset += overLong + piece.length + terminator;
        parsed = tooLong(line, overLong + piece.length, maxLineBytes, offset);
        overLong = 0;
      } else {
        const buf = pending.length ? Buffer.concat([...pending, piece], pendingBytes + piece.length) : piece;
        offset += buf.length + terminator;
        parsed = buf.length > maxLineBytes ? tooLong(line, buf.length, maxLineBytes, offset) : parseLine(buf, line, offset, lineStart === 0);
      }
      pending = [];
      pendingBytes = 0;
      if (parsed) yield parsed;
      line++;
      from = end + terminator;
    }
    if (from < chunk.length) {
      const rest = chunk.subarray(from);
      if (overLong || pendingBytes + rest.length > maxLineBytes) {
        overLong += pendingBytes + rest.length;
        pending = [];
        pendingBytes = 0;
      } else {
        pending.push(rest);
        pendingBytes += rest.length;
      }
    }
  }
  if (overLong) yield tooLong(line, overLong, maxLineBytes, offset + overLong);
  else if (pendingBytes) {
    const buf = Buffer.concat(pending, pendingBytes);
    const parsed = parseLine(buf, line, offset + buf.length, offset === 0);
    if (parsed && parsed.error === undefined) yield parsed;
  }
}

function tooLong(line: number, bytes: number, max: number, endOffset: number): JsonLine {
  const mib = (n: number) => `${(n / 1024 / 1024).toFixed(n < 1024 * 1024 ? 3 : 0)} MiB`;
  return { error: `the line is ${mib(bytes)} long, over the ${mib(max)} a line may hold; it was not read (split the record, or drop it with --on-error skip)`, raw: '', line, endOffset };
}

function parseLine(buf: Buffer, line: number, endOffset: number, fileStart: boolean): JsonLine | null {
  let text = buf.toString('utf8');
  // A byte-order mark (Windows editors write one) is not part of the first record.
  if (fileStart && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === '') return null;
  try {
    return { value: JSON.parse(text), line, endOffset };
  } catch (err) {
    // Python trainers write json.dumps output: a NaN or infinite float is a bare token there.
    const python = parsePythonJson(text);
    if (python) return { value: python.value, line, endOffset };
    return { error: (err as Error).message, raw: text.length > 65536 ? text.slice(0, 65536) : text, line, endOffset };
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const ESCAPED_CONTROL = Buffer.from('\\u00', 'latin1');

/** What a bulk plan asks the scan to check beyond duplicate keys (see BulkPlan). */
export interface ShapeCheck {
  /** Every record's top-level keys, in this order. */
  keys?: readonly string[];
  /**
   * Top-level keys whose values DuckDB stores as its own JSON text of them, in place of
   * JSON.stringify's: each such value must be text, null, or a list of flat chat messages
   * (objects with a string `role`, values that are text, true, false or null, no key
   * twice, no whole-number key, no control character DuckDB escapes in upper case), so
   * that both texts are the same.
   */
  messages?: readonly string[];
  /** The one of `messages` whose list may hold one assistant message at most and no tool message (a single turn). */
  singleTurn?: string;
  /**
   * Top-level keys whose values DuckDB stores as its own JSON text: every number in them
   * must be written as JavaScript writes it (a `.0` fraction aside, which the plan drops).
   */
  jsonText?: readonly string[];
  /**
   * Texts (as the file's raw JSON writes them) that must not occur in the string value of
   * the top-level key `key`: verl's turn markers in `output`, which the plan was made
   * without, having seen none in the file's head.
   */
  markers?: { key: string; texts: readonly string[] };
}

/**
 * Watches JSONL bytes, fed in any chunks, for a record that names one top-level key twice.
 * Such a record means its last value (as JSON.parse and Python's json read it), but
 * DuckDB's reader keeps the first: the bulk path sends a file where this finds one to the
 * streaming path, so both paths store the same rows. Strings are skipped natively
 * (indexOf), so the cost is per token, not per byte. A malformed line can only make it
 * report a duplicate that is not there, which costs speed, never a wrong row.
 *
 * Given a ShapeCheck (a bulk plan's), it also reports a record whose top-level keys are
 * not exactly the plan's, in that order, as their JSON text is written (DuckDB's reader,
 * given a column spec, drops a key it does not name and reads a missing one as null), or
 * whose message values are not of the shape the plan's SQL relies on: `found` then says
 * the file must be streamed.
 */
export class DuplicateKeyScan {
  found = false;
  private depth = 0;
  private inString = false;
  private escapeNext = false;
  private isKey = false;
  private expectKey = false;
  private key = '';
  private keys = new Set<string>();
  /** The expected keys as their raw bytes in the file (latin1 of the UTF-8 of their JSON text). */
  private readonly expected: string[] | undefined;
  /** The same, as bytes to compare a key with in place (see name). */
  private readonly expectedBytes: Buffer[] | undefined;
  private readonly messageKeys: Set<string>;
  /** Top-level keys seen so far in the current record. */
  private count = 0;
  /** The current top-level value is one of `messageKeys`. */
  private inMessages = false;
  /** Inside a message object (depth 3 of a messages value): its keys, whether a key comes next, whether it has a string role. */
  private messageKeysSeen = new Set<string>();
  private expectMessageKey = false;
  private isMessageKey = false;
  private awaitingRole = false;
  private hasRole = false;
  /** The role's value is being read (into `key`), in the single-turn list; its assistant messages so far. */
  private isRole = false;
  private readonly singleTurn: string | undefined;
  private inSingleTurn = false;
  private assistants = 0;
  private readonly textKeys: Set<string>;
  /** ShapeCheck.markers: the key (raw), the texts as bytes, and the longest's length. */
  private readonly markerKey: string | undefined;
  private readonly markerTexts: Buffer[];
  /** A byte of each text that plain prose rarely holds: a value without it cannot hold the text (one native byte search rules it out). */
  private readonly markerBytes: number[];
  private readonly markerMax: number;
  /** The current top-level value is the marker key's; where its string started in this chunk (-1: not in it); its last bytes of the chunk before. */
  private inMarked = false;
  private markedFrom = -1;
  private markerCarry: Buffer | undefined;
  /** The current top-level value is one of `textKeys`; the number being read there. */
  private inText = false;
  /**
   * The containers open inside that value, innermost last: an object's keys so far, or null
   * for a list; whether a key comes next, and whether the string being read is one.
   */
  private nested: (string[] | null)[] = [];
  /** How many containers of `nested` are open (its arrays are reused from record to record). */
  private open = 0;
  /** Keys of nested objects seen so far in the file, as bytes and text (see name): a few, met again on every line. */
  private nestedNames: [Buffer, string][] = [];
  private expectNestedKey = false;
  private isNestedKey = false;
  private number = '';
  /**
   * Where the current chunk holds an escaped control character with a hex letter (see
   * upperCaseEscape), found once per chunk when the plan has message keys, and the first
   * of them checkEscapes has not passed yet: its strings are checked against this list
   * rather than searched one by one.
   */
  private upperEscapes: number[] = [];
  private nextEscape = 0;
  /** The start of an escape cut by the end of the last chunk (see checkEscapes). */
  private carry: Buffer | undefined;

  constructor(check: ShapeCheck = {}) {
    const raw = (k: string) => Buffer.from(JSON.stringify(k).slice(1, -1), 'utf8').toString('latin1');
    this.expected = check.keys?.map(raw);
    this.expectedBytes = this.expected?.map((k) => Buffer.from(k, 'latin1'));
    this.messageKeys = new Set((check.messages ?? []).map(raw));
    this.singleTurn = check.singleTurn === undefined ? undefined : raw(check.singleTurn);
    this.textKeys = new Set((check.jsonText ?? []).map(raw));
    this.markerKey = check.markers ? raw(check.markers.key) : undefined;
    this.markerTexts = (check.markers?.texts ?? []).map((t) => Buffer.from(t, 'utf8'));
    this.markerMax = Math.max(0, ...this.markerTexts.map((t) => t.length));
    this.markerBytes = this.markerTexts.map((t) => [...RARE_BYTES].find((b) => t.includes(b)) ?? t[0]!);
  }

  feed(chunk: Buffer): void {
    const n = chunk.length;
    let i = 0;
    if (this.messageKeys.size) {
      this.upperEscapes = upperCaseEscapes(chunk);
      this.nextEscape = 0;
    }
    while (i < n && !this.found) {
      if (this.inString) {
        if (this.escapeNext) {
          this.escapeNext = false;
          // The carried backslash starts a \u escape, or a two-character one that is whole now.
          if (this.carry) this.carry = chunk[i] === 0x75 ? Buffer.concat([this.carry, chunk.subarray(i, i + 1)]) : undefined;
          if (this.isKey || this.isMessageKey || this.isRole || this.isNestedKey) this.key += chunk.toString('latin1', i, i + 1);
          i++;
          // A chunk that ends with the escaped character: it joins the marker key's bytes so far.
          if (i === n && this.markedFrom >= 0) {
            this.findMarkers(chunk, this.markedFrom, n, true);
            this.markedFrom = 0;
          }
          continue;
        }
        const q = chunk.indexOf(QUOTE, i);
        const end = q === -1 ? n : q;
        let j = end - 1;
        while (j >= i && chunk[j] === BACKSLASH) j--;
        const oddBackslashes = (end - 1 - j) % 2 === 1;
        if (this.isKey || this.isMessageKey || this.isRole || this.isNestedKey) {
          // A name read whole in one piece (the usual case) is compared in place; one cut by an escape or the chunk's end is gathered.
          if (this.key === '' && q !== -1 && !oddBackslashes) this.key = this.name(chunk, i, q);
          else if (this.key.length < 4096) this.key += chunk.toString('latin1', i, end);
        }
        if (this.inMessages && this.depth >= 2) this.checkEscapes(chunk, i, end, q === -1);
        // The marker key's value is searched once it ends, or up to the chunk's end.
        if (this.markedFrom >= 0 && (q === -1 || !oddBackslashes)) {
          this.findMarkers(chunk, this.markedFrom, end, q === -1);
          this.markedFrom = q === -1 ? 0 : -1;
        }
        if (q === -1) {
          this.escapeNext = oddBackslashes;
          return;
        }
        i = q + 1;
        if (oddBackslashes) {
          if (this.isKey || this.isMessageKey || this.isRole || this.isNestedKey) this.key += '"';
          continue;
        }
        this.inString = false;
        if (this.isKey) {
          // Keys checked against the plan's (all different) in order cannot repeat unseen.
          if (this.expected) {
            if (this.expected[this.count++] !== this.key) this.found = true;
          } else {
            if (this.keys.has(this.key)) this.found = true;
            this.keys.add(this.key);
          }
          this.inMessages = this.messageKeys.has(this.key);
          this.inSingleTurn = this.key === this.singleTurn;
          this.inText = this.textKeys.has(this.key);
          this.inMarked = this.key === this.markerKey;
          this.assistants = 0;
        } else if (this.isNestedKey) {
          // A key of an object inside a value kept as JSON text: DuckDB keeps a repeated key's first value, JSON.parse its last.
          this.isNestedKey = false;
          const keys = this.nested[this.open - 1];
          if (keys) {
            // Searched in a list (such objects hold a few keys); one with hundreds is left to the streaming path.
            if (keys.includes(this.key) || keys.length >= 256) this.found = true;
            keys.push(this.key);
          }
        } else if (this.isRole) {
          this.isRole = false;
          if (this.inSingleTurn && (this.key === 'tool' || (this.key === 'assistant' && ++this.assistants > 1))) this.found = true;
        } else if (this.isMessageKey) {
          // JavaScript puts whole-number keys first and keeps a repeated key's last value.
          if (this.messageKeysSeen.has(this.key) || /^(0|[1-9][0-9]*)$/.test(this.key)) this.found = true;
          this.messageKeysSeen.add(this.key);
          if (this.key === 'role') this.awaitingRole = true;
          this.isMessageKey = false;
        }
        continue;
      }
      const c = chunk[i++]!;
      if (c === 0x20 || c === 0x09) continue;
      if (this.inMessages && this.depth >= 2 && c !== NL && c !== CR) {
        if (!this.messageToken(c)) {
          this.found = true;
          return;
        }
        if (c === QUOTE) {
          this.inString = true;
          this.isKey = false;
          this.key = '';
        }
        continue;
      }
      if (this.inText) {
        // A number of a value kept as JSON text, read whole (it may span chunks).
        if ((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e || c === 0x2b || c === 0x65 || c === 0x45) {
          if (this.number || c === 0x2d || (c >= 0x30 && c <= 0x39)) {
            this.number += String.fromCharCode(c);
            continue;
          }
        } else if (this.number) {
          if (!writtenAsJs(this.number)) this.found = true;
          this.number = '';
        }
      }
      if (c === QUOTE) {
        this.inString = true;
        this.isKey = this.depth === 1 && this.expectKey;
        this.expectKey = false;
        this.key = '';
        if (this.inMarked && !this.isKey && this.depth === 1) this.markedFrom = i;
        this.isNestedKey = this.expectNestedKey;
        this.expectNestedKey = false;
      } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
        if (++this.depth === 1) {
          this.keys.clear();
          this.count = 0;
        } else if (this.inText) {
          const reused = this.nested[this.open];
          this.nested[this.open++] = c === 0x7b ? (reused ? ((reused.length = 0), reused) : []) : null;
          this.expectNestedKey = c === 0x7b;
        }
        this.expectKey = c === 0x7b && this.depth === 1;
      } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
        if (this.inText && this.depth >= 2 && this.open > 0) this.open--;
        this.expectNestedKey = false;
        // A record ends: it had every expected key.
        if (--this.depth === 0 && this.expected && this.count !== this.expected.length) this.found = true;
        if (this.depth <= 1) this.inMessages = false;
        if (this.depth === 0) this.inText = this.inMarked = false;
      } else if (c === 0x2c /* , */) {
        this.expectKey = this.depth === 1;
        this.expectNestedKey = this.inText && this.depth >= 2 && this.open > 0 && !!this.nested[this.open - 1];
        if (this.depth === 1) this.inMessages = this.inText = this.inMarked = false;
      } else if (c === NL || c === CR) {
        this.depth = 0; // a line end outside a string ends the record, whatever came before
        this.open = 0;
        this.expectNestedKey = false;
        this.inMessages = this.inText = this.inMarked = false;
        this.number = '';
      }
    }
  }

  /** Whether a marker text (ShapeCheck.markers) occurs in chunk[from, to), or across the chunk before's end. */
  private findMarkers(chunk: Buffer, from: number, to: number, continues: boolean): void {
    const part = chunk.subarray(from, to);
    if (this.markerCarry) {
      const joined = Buffer.concat([this.markerCarry, part.subarray(0, this.markerMax)]);
      if (this.markerTexts.some((t) => joined.includes(t))) this.found = true;
    }
    for (let k = 0; k < this.markerTexts.length; k++) if (part.includes(this.markerBytes[k]!) && part.includes(this.markerTexts[k]!)) this.found = true;
    if (!continues) {
      this.markerCarry = undefined;
      return;
    }
    // The value's last bytes so far (over several chunks when they are small), where a marker may start.
    const keep = this.markerMax - 1;
    const carry = this.markerCarry;
    this.markerCarry = Buffer.from(part.length >= keep || !carry ? part.subarray(Math.max(0, part.length - keep)) : Buffer.concat([carry, part]).subarray(-keep));
  }

  /**
   * The text of a key or role written whole in chunk[from, to): the expected key or a usual
   * message name when the bytes are that (no new string), else the bytes as latin1 (as the
   * names are compared, see the constructor).
   */
  private name(chunk: Buffer, from: number, to: number): string {
    if (this.isKey) {
      const want = this.expectedBytes?.[this.count];
      if (want && sameBytes(chunk, from, to, want)) return this.expected![this.count]!;
    } else if (this.isNestedKey) {
      for (const [bytes, text] of this.nestedNames) if (sameBytes(chunk, from, to, bytes)) return text;
      const text = chunk.toString('latin1', from, to);
      if (this.nestedNames.length < 64) this.nestedNames.push([Buffer.from(text, 'latin1'), text]);
      return text;
    } else {
      for (const [bytes, text] of MESSAGE_NAMES) if (sameBytes(chunk, from, to, bytes)) return text;
    }
    return chunk.toString('latin1', from, to);
  }

  /**
   * A character outside strings inside a messages value (depth 2: the list, 3: a message):
   * whether the shape still holds. Tracks the message's keys and its role.
   */
  private messageToken(c: number): boolean {
    if (this.depth === 2) {
      // Between messages: each is an object.
      if (c === 0x7b) {
        this.depth = 3;
        this.messageKeysSeen.clear();
        this.expectMessageKey = true;
        this.hasRole = false;
        return true;
      }
      if (c === 0x5d) {
        this.depth = 1;
        this.inMessages = false;
        return true;
      }
      return c === 0x2c;
    }
    // In a message: keys, then text, true, false or null; no number, no nested list or object.
    if (c === QUOTE) {
      this.isMessageKey = this.expectMessageKey;
      this.isRole = !this.isMessageKey && this.awaitingRole;
      if (this.isRole) this.hasRole = true;
      this.expectMessageKey = false;
      this.awaitingRole = false;
      return true;
    }
    if (c === 0x3a /* : */) return !this.expectMessageKey;
    if (c === 0x2c) {
      this.expectMessageKey = true;
      return !this.awaitingRole;
    }
    if (c === 0x7d) {
      this.depth = 2;
      return this.hasRole && !this.awaitingRole;
    }
    this.isMessageKey = false;
    if (this.awaitingRole) return false; // a role that is not text
    return c === 0x74 /* t */ || c === 0x72 || c === 0x75 || c === 0x65 || c === 0x66 /* f */ || c === 0x61 || c === 0x6c || c === 0x73 || c === 0x6e /* n */;
  }

  /**
   * A control character DuckDB writes as \u001F (JavaScript: \u001f) in a string's bytes
   * chunk[from, to): the text would differ. An escape the chunk's end cuts is carried over.
   */
  private checkEscapes(chunk: Buffer, from: number, to: number, continues: boolean): void {
    if (this.carry) {
      const joined = Buffer.concat([this.carry, chunk.subarray(from, Math.min(to, from + 6))]);
      this.carry = joined.length < 6 && continues ? joined : undefined;
      if (!this.carry && upperCaseEscape(joined)) this.found = true;
    }
    // An escape that starts in [from, to) lies whole in it: the string goes on past it (a quote ends no escape) or the chunk ends, which the carry covers.
    const at = this.upperEscapes;
    while (this.nextEscape < at.length && at[this.nextEscape]! < from) this.nextEscape++;
    if (this.nextEscape < at.length && at[this.nextEscape]! < to) this.found = true;
    if (continues && !this.carry) {
      const k = chunk.lastIndexOf(BACKSLASH, to - 1);
      if (k !== -1 && k >= Math.max(from, to - 5)) this.carry = Buffer.from(chunk.subarray(k, to));
    }
  }
}

/** Bytes that prose and JSON text hold rarely, the rarest first (see DuplicateKeyScan.markerBytes). */
const RARE_BYTES = Buffer.from('|_^~`>');

/** Message keys and roles, as bytes and text (see DuplicateKeyScan.name). */
const MESSAGE_NAMES: [Buffer, string][] = ['role', 'content', 'assistant', 'user', 'system', 'tool'].map((n) => [Buffer.from(n, 'latin1'), n]);

/** Whether chunk[from, to) holds exactly `bytes`. */
function sameBytes(chunk: Buffer, from: number, to: number, bytes: Buffer): boolean {
  if (to - from !== bytes.length) return false;
  for (let k = 0; k < bytes.length; k++) if (chunk[from + k] !== bytes[k]) return false;
  return true;
}

/** Whether `bytes` hold an escaped control character with a hex letter (\u000b … \u001f), which DuckDB writes in upper case. */
function upperCaseEscape(bytes: Buffer): boolean {
  return upperCaseEscapes(bytes, true).length > 0;
}

/** Where `bytes` hold such an escape, whole (the first only, with `first`). */
function upperCaseEscapes(bytes: Buffer, first = false): number[] {
  const out: number[] = [];
  for (let u = bytes.indexOf(ESCAPED_CONTROL); u !== -1; u = bytes.indexOf(ESCAPED_CONTROL, u + 1)) {
    const a = bytes[u + 4];
    const b = bytes[u + 5];
    if ((a === 0x30 || a === 0x31) && b !== undefined && ((b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66))) {
      out.push(u);
      if (first) break;
    }
  }
  return out;
}

/**
 * Whether JavaScript writes the JSON number `text` as it is (a `.0` fraction dropped, as the
 * bulk plans drop it). The usual numbers are decided from their digits: a decimal of at most
 * 15 significant digits, in JavaScript's fixed notation range, without a leading zero or a
 * trailing zero after the point, is written as it is (15 digits always come back from a
 * double, so no shorter text names the same double); anything else is converted.
 */
export function writtenAsJs(text: string): boolean {
  const n = text.length;
  const from = text.charCodeAt(0) === 0x2d ? 1 : 0;
  let k = from;
  while (k < n && isDigit(text.charCodeAt(k))) k++;
  const whole = k - from;
  const zero = whole === 1 && text.charCodeAt(from) === 0x30;
  if (whole > 0 && whole < 16 && (whole === 1 || text.charCodeAt(from) !== 0x30)) {
    if (k === n) return text !== '-0';
    if (text.charCodeAt(k) === 0x2e) {
      const point = k++;
      while (k < n && isDigit(text.charCodeAt(k))) k++;
      if (k === n && k > point + 1) {
        let last = n - 1;
        while (last > point && text.charCodeAt(last) === 0x30) last--;
        // Only zeros after the point: the whole part, as above.
        if (last === point) return !(zero && from === 1);
        if (last === n - 1) {
          // 0.000001 is JavaScript's smallest fixed-notation fraction.
          let first = zero ? point + 1 : from;
          if (zero) while (text.charCodeAt(first) === 0x30) first++;
          const significant = zero ? n - first : whole + (n - point - 1);
          if (significant <= 15 && (!zero || first - point - 1 <= 5)) return true;
        }
      }
    }
  }
  const t = /^-?[0-9]+\.0+$/.test(text) ? text.replace(/\.0+$/, '') : text;
  return t !== '-0' && String(Number(t)) === t;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}
