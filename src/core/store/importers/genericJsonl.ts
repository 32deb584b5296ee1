import type { RolloutRecord } from '../rows';
import { readJsonLines } from './jsonLines';
import type { FieldMapping, Importer } from './types';
import { bad, bool, describeType, getPath, isRecord, num, str } from './util';

/**
 * Any JSONL with a declared field mapping (CLI `--map prompt=question,…`). One record can
 * hold several samples of one prompt (`samples`), which then form one group.
 */
export const genericJsonlImporter: Importer = {
  format: 'jsonl',
  description: 'generic JSONL with a declared field mapping (--map / --mapping)',
  followable: true,
  // Never auto-detected: it needs a mapping, so it runs only with --format jsonl.
  matches: () => false,
  async *read(file, opts) {
    const mapping = opts.mapping;
    if (!mapping?.prompt) throw new Error(`importing ${file} as generic JSONL needs a field mapping with at least "prompt" (e.g. --map prompt=question,response=answer)`);
    for await (const l of readJsonLines(file, opts.startOffset, opts.startLine, opts.onChunk)) {
      const at = { file, line: l.line, endOffset: l.endOffset };
      if (l.error !== undefined) {
        yield bad(file, l.line, `not valid JSON (${l.error})`, l.raw, at);
        continue;
      }
      if (!isRecord(l.value)) {
        yield bad(file, l.line, `expected a JSON object per line, found ${describeType(l.value)}`, JSON.stringify(l.value), at);
        continue;
      }
      const records = toRecords(l.value, mapping, opts.split);
      if (typeof records === 'string') {
        yield bad(file, l.line, records, JSON.stringify(l.value).slice(0, 65536), at);
        continue;
      }
      for (const record of records) yield { record, at };
    }
  },
};

function toRecords(row: Record<string, unknown>, m: FieldMapping, defaultSplit: RolloutRecord['split'] | undefined): RolloutRecord[] | string {
  const prompt = getPath(row, m.prompt);
  if (typeof prompt !== 'string' && !Array.isArray(prompt)) return `mapped prompt field "${m.prompt}" is ${describeType(prompt)}, expected text or messages`;
  const step = m.step ? num(getPath(row, m.step)) : 0;
  const splitValue = m.split ? str(getPath(row, m.split)) : null;
  const base = {
    step: typeof step === 'number' ? step : 0,
    split: splitValue === 'val' || splitValue === 'test' || splitValue === 'validation' ? 'val' as const : splitValue === 'train' ? 'train' as const : defaultSplit ?? 'train',
    prompt: prompt as RolloutRecord['prompt'],
    promptId: m.promptId ? str(getPath(row, m.promptId)) : null,
    groupId: m.groupId ? str(getPath(row, m.groupId)) : null,
    groundTruth: m.groundTruth ? str(getPath(row, m.groundTruth)) : null,
    dataSource: m.dataSource ? str(getPath(row, m.dataSource)) : null,
  };
  const sources = m.samples?.length ? m.samples.map((s) => ({ name: s, value: getPath(row, s) })) : [{ name: null, value: row }];
  const out: RolloutRecord[] = [];
  for (const { name, value } of sources) {
    if (name !== null && !isRecord(value)) return `sample field "${name}" is ${describeType(value)}, expected an object`;
    const response = m.response ? getPath(value, m.response) : '';
    if (typeof response !== 'string' && !Array.isArray(response)) return `mapped response field "${name ? `${name}.` : ''}${m.response}" is ${describeType(response)}, expected text or turns`;
    const reward = m.reward ? num(getPath(value, m.reward)) : null;
    if (reward === undefined) return `mapped reward field "${m.reward}" is not a number`;
    const correct = m.correct ? bool(getPath(value, m.correct)) : null;
    out.push({
      ...base,
      response: response as RolloutRecord['response'],
      reward: reward ?? (correct === null ? null : correct ? 1 : 0),
      correct,
      numTurns: 1,
      extra: name ? { sample: name } : {},
    });
  }
  return out;
}
