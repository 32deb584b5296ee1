/**
 * A document worker (a worker thread; see documentWorkers.ts): reads one whole-document
 * file (a trajectory) at a time, hashes its bytes, runs its importer and hands back the
 * records with their text columns already serialized, so that the importing thread only
 * appends. Bundled as dist/store-worker.js.
 */
import { createHash } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { readDocumentSync } from './compressed';
import { encodedRecordText, type EncodedText } from './documentText';
import { DEFAULT_MAX_DOCUMENT_BYTES } from './importers/documentSize';
import { importerFor } from './importers';
import type { FormatName, TableReader } from './importers/types';
import { int, isBad, unstorable, type RolloutRecord, type SourcePosition, type StepRecord } from './rows';
import type { Split } from '../model';

export interface DocumentTask {
  id: number;
  file: string;
  format: FormatName;
  split?: Split;
  verdicts?: string;
  /** The most bytes a document may hold (a .gz file is decompressed up to it). */
  maxBytes?: number;
}

/**
 * A record as it crosses threads: prompt and response travel as UTF-8 bytes only (see
 * EncodedText; their buffers are transferred, not copied), its steps as one JSON text of
 * their columns (see StepRows), which DuckDB unnests into step rows: the importing thread
 * never makes an object, nor a DuckDB value, per step.
 */
export type WireItem = { at: SourcePosition; record: RolloutRecord; text: EncodedText; steps?: StepRows } | { at: SourcePosition; bad: { file: string; line: number | null; reason: string; raw?: string } };

/**
 * A rollout's steps for the store: `json`, an object of one array per StepRecord field
 * (STEP_COLUMNS_TYPE), its whole numbers already truncated and its commands well-formed
 * UTF-16 (a lone surrogate becomes U+FFFD, as the appender stores it); `count`, the steps.
 */
export interface StepRows {
  json: string;
  count: number;
}

const STEP_FIELDS = ['role', 'actionKind', 'command', 'exitCode', 'observationBytes', 'formatError', 'timeout', 'truncated', 'tokens'] as const satisfies readonly (keyof StepRecord)[];

/** What DuckDB's from_json reads a StepRows text as. */
export const STEP_COLUMNS_TYPE = JSON.stringify({ role: ['VARCHAR'], actionKind: ['VARCHAR'], command: ['VARCHAR'], exitCode: ['INTEGER'], observationBytes: ['INTEGER'], formatError: ['BOOLEAN'], timeout: ['BOOLEAN'], truncated: ['BOOLEAN'], tokens: ['INTEGER'] });

/** A lone surrogate (which JSON.stringify escapes as such) as U+FFFD, as the store keeps it. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const wellFormed = (s: string): string => s.replace(LONE_SURROGATE, '\ufffd');

export function stepRows(steps: StepRecord[]): StepRows {
  const out = Object.fromEntries(STEP_FIELDS.map((k) => [k, new Array(steps.length)])) as Record<keyof StepRecord, unknown[]>;
  for (let i = 0; i < steps.length; i++) {
    const st = steps[i]!;
    out.role[i] = st.role;
    out.actionKind[i] = st.actionKind;
    out.command[i] = st.command === null || st.command === undefined ? null : wellFormed(st.command);
    out.exitCode[i] = int(st.exitCode);
    out.observationBytes[i] = int(st.observationBytes);
    out.formatError[i] = st.formatError;
    out.timeout[i] = st.timeout;
    out.truncated[i] = st.truncated;
    out.tokens[i] = int(st.tokens);
  }
  return { json: JSON.stringify(out), count: steps.length };
}

export type DocumentReply =
  | { id: number; ok: true; hash: string; items: WireItem[] }
  | { id: number; ok: false; error: { message: string; importError?: { file: string; line: number | null; reason: string; raw?: string } } };

/** Marks the worker data of a document worker (the entry does nothing when loaded otherwise). */
export const DOCUMENT_WORKER = 'evotrainer-document-worker';

const noTables: TableReader = {
  readParquet() {
    throw new Error('columnar files are read on the importing thread');
  },
};

export async function parseDocument(task: DocumentTask): Promise<DocumentReply> {
  try {
    const content = readDocumentSync(task.file, task.maxBytes ?? DEFAULT_MAX_DOCUMENT_BYTES);
    const hash = createHash('sha256').update(content).digest('hex');
    const items: WireItem[] = [];
    let last: ReturnType<typeof encodedRecordText> | undefined;
    for await (const item of importerFor(task.format).read(task.file, { split: task.split, verdicts: task.verdicts, tables: noTables, content })) {
      if (isBad(item)) {
        const e = item.error;
        items.push({ at: item.at, bad: { file: e.file, line: e.line, reason: e.reason, raw: e.raw } });
        continue;
      }
      // What the store cannot hold is a bad record here, with its steps at hand.
      const refused = unstorable(item.record, item.at);
      if (refused) {
        items.push({ at: item.at, bad: { file: refused.file, line: refused.line, reason: refused.reason, raw: refused.raw } });
        continue;
      }
      last = encodedRecordText(item.record, last);
      const { steps, ...record } = item.record;
      // (the turns, when the format gives none, are counted from the steps as the store would)
      const numTurns = record.numTurns ?? (steps ? steps.filter((s) => s.role === 'assistant').length : undefined);
      items.push({ at: item.at, record: { ...record, numTurns, prompt: '', response: '' }, text: last.text, ...(steps ? { steps: stepRows(steps) } : {}) });
    }
    return { id: task.id, ok: true, hash, items };
  } catch (err) {
    const e = err as Error & { file?: string; line?: number | null; reason?: string; raw?: string };
    const importError = e.name === 'ImportError' && typeof e.file === 'string' && typeof e.reason === 'string' ? { file: e.file, line: e.line ?? null, reason: e.reason, raw: e.raw } : undefined;
    return { id: task.id, ok: false, error: { message: e.message ?? String(err), importError } };
  }
}

/** The buffers of the items' texts: moved to the importing thread, not copied. */
function transferable(items: WireItem[]): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  for (const item of items) if ('text' in item) out.push(item.text.prompt.buffer as ArrayBuffer, item.text.response.buffer as ArrayBuffer);
  return out;
}

if (parentPort && workerData === DOCUMENT_WORKER) {
  const port = parentPort;
  port.on('message', (task: DocumentTask) => {
    void parseDocument(task).then((reply) => port.postMessage(reply, reply.ok ? transferable(reply.items) : []));
  });
  port.postMessage('ready');
}
