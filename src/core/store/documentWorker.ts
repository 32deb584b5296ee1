/**
 * A document worker (a worker thread; see documentWorkers.ts): reads one whole-document
 * file (a trajectory) at a time, hashes its bytes, runs its importer and hands back the
 * records with their text columns already serialized, so that the importing thread only
 * appends. Bundled as dist/store-worker.js.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { encodedRecordText, type EncodedText } from './documentText';
import { importerFor } from './importers';
import type { FormatName, TableReader } from './importers/types';
import { isBad, type RolloutRecord, type SourcePosition, type StepRecord } from './rows';
import type { Split } from '../model';

export interface DocumentTask {
  id: number;
  file: string;
  format: FormatName;
  split?: Split;
  verdicts?: string;
}

/**
 * A record as it crosses threads: prompt and response travel as UTF-8 bytes only (see
 * EncodedText; their buffers are transferred, not copied), steps as columns (copying a few
 * arrays between threads costs less than copying thousands of small objects).
 */
export type WireItem = { at: SourcePosition; record: RolloutRecord; text: EncodedText; steps?: StepColumns } | { at: SourcePosition; bad: { file: string; line: number | null; reason: string; raw?: string } };

/** StepRecord fields, one array each. */
export type StepColumns = { [K in keyof StepRecord]-?: StepRecord[K][] };

const STEP_FIELDS = ['role', 'actionKind', 'command', 'exitCode', 'observationBytes', 'formatError', 'timeout', 'truncated', 'tokens'] as const satisfies readonly (keyof StepRecord)[];

export function stepColumns(steps: StepRecord[]): StepColumns {
  const out = Object.fromEntries(STEP_FIELDS.map((k) => [k, new Array(steps.length)])) as Record<keyof StepRecord, unknown[]>;
  for (let i = 0; i < steps.length; i++) {
    const st = steps[i]!;
    for (const k of STEP_FIELDS) out[k][i] = st[k];
  }
  return out as StepColumns;
}

export function stepRecords(c: StepColumns): StepRecord[] {
  const out: StepRecord[] = new Array(c.role.length);
  for (let i = 0; i < out.length; i++) {
    out[i] = { role: c.role[i]!, actionKind: c.actionKind[i]!, command: c.command[i]!, exitCode: c.exitCode[i]!, observationBytes: c.observationBytes[i]!, formatError: c.formatError[i]!, timeout: c.timeout[i]!, truncated: c.truncated[i]!, tokens: c.tokens[i]! };
  }
  return out;
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
    const content = readFileSync(task.file);
    const hash = createHash('sha256').update(content).digest('hex');
    const items: WireItem[] = [];
    let last: ReturnType<typeof encodedRecordText> | undefined;
    for await (const item of importerFor(task.format).read(task.file, { split: task.split, verdicts: task.verdicts, tables: noTables, content })) {
      if (isBad(item)) {
        const e = item.error;
        items.push({ at: item.at, bad: { file: e.file, line: e.line, reason: e.reason, raw: e.raw } });
        continue;
      }
      last = encodedRecordText(item.record, last);
      const { steps, ...record } = item.record;
      items.push({ at: item.at, record: { ...record, prompt: '', response: '' }, text: last.text, ...(steps ? { steps: stepColumns(steps) } : {}) });
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
