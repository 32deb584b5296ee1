/**
 * The text columns of a rollout row, as the store keeps them: prompt and response as text,
 * or as JSON of their messages / turns, and the hash of the prompt that derived group and
 * prompt ids are made of. Computed on the importing thread, or on a document worker
 * (documentWorkers.ts) that then hands over the strings instead of the objects.
 */
import { createHash } from 'node:crypto';
import type { RolloutRecord } from './rows';

export interface RecordText {
  promptText: string;
  promptKind: 'text' | 'messages';
  /** md5 of promptText, 16 hex digits (see promptHashOf). */
  promptHash: string;
  responseText: string;
  responseKind: 'text' | 'turns';
  /** Characters of responseText as DuckDB's length() counts them (code points). */
  responseChars: number;
}

/**
 * A record's text columns as a document worker hands them over: the two texts as UTF-8
 * bytes, each in a buffer of its own, transferred between threads (not copied) and given
 * to DuckDB as they are (see chunkRows.ts).
 */
export interface EncodedText extends Omit<RecordText, 'promptText' | 'responseText'> {
  prompt: Uint8Array;
  response: Uint8Array;
}

export function isEncoded(t: RecordText | EncodedText): t is EncodedText {
  return 'prompt' in t;
}

/**
 * recordText's columns with the texts as UTF-8 bytes (see EncodedText), and the prompt text
 * (for the next record's `last`). The bytes give the prompt hash and, for ASCII text, the
 * code points, without another pass over the strings.
 */
export function encodedRecordText(rec: RolloutRecord, last?: { promptText: string; text: EncodedText }): { promptText: string; text: EncodedText } {
  const promptText = typeof rec.prompt === 'string' ? rec.prompt : JSON.stringify(rec.prompt);
  const responseText = typeof rec.response === 'string' ? rec.response : JSON.stringify(rec.response);
  const prompt = ownUtf8(promptText);
  const response = ownUtf8(responseText);
  const text: EncodedText = {
    prompt,
    promptKind: typeof rec.prompt === 'string' ? 'text' : 'messages',
    promptHash: last && last.promptText === promptText ? last.text.promptHash : promptHashOf(prompt),
    response,
    responseKind: typeof rec.response === 'string' ? 'text' : 'turns',
    // As many bytes as UTF-16 units: every character is ASCII, one code point each.
    responseChars: response.length === responseText.length ? response.length : codePoints(responseText),
  };
  return { promptText, text };
}

/** UTF-8 of `s` in a buffer of its own: Node's small buffers share one pool, which must not be transferred. */
function ownUtf8(s: string): Uint8Array {
  const b = Buffer.from(s, 'utf8');
  return b.byteOffset === 0 && b.buffer.byteLength === b.length ? b : new Uint8Array(b);
}

/** The prompt part of derived group ids: md5, so DuckDB's md5() gives the same ids on the bulk path. */
export function promptHashOf(s: string | Uint8Array): string {
  return createHash('md5').update(s).digest('hex').slice(0, 16);
}

/**
 * A record's text columns. `last` is the previous record's (samples of one prompt arrive
 * together): its prompt hash is reused when the prompt text is the same.
 */
export function recordText(rec: RolloutRecord, last?: RecordText): RecordText {
  const promptText = typeof rec.prompt === 'string' ? rec.prompt : JSON.stringify(rec.prompt);
  const responseText = typeof rec.response === 'string' ? rec.response : JSON.stringify(rec.response);
  return {
    promptText,
    promptKind: typeof rec.prompt === 'string' ? 'text' : 'messages',
    promptHash: last && last.promptText === promptText ? last.promptHash : promptHashOf(promptText),
    responseText,
    responseKind: typeof rec.response === 'string' ? 'text' : 'turns',
    responseChars: codePoints(responseText),
  };
}

/** Code points of a string, as DuckDB's length() counts the text: a surrogate pair is one, a lone surrogate (stored as U+FFFD) one. */
export function codePoints(s: string): number {
  // ASCII text (the usual JSON dump) has no surrogates; the byte count says so quickly.
  if (Buffer.byteLength(s, 'utf8') === s.length || !SURROGATE_PAIR.test(s)) return s.length;
  let n = 0;
  for (const _ of s) n++;
  return n;
}

const SURROGATE_PAIR = /[\ud800-\udbff][\udc00-\udfff]/;
