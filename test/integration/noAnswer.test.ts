import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadDuckDB } from '../../src/core/store/duckdb';
import { NO_ANSWER_SQL } from '../../src/core/store/schema';

/** The answer the no-answer check looks for, as one pattern (RE2): what NO_ANSWER_SQL must tell, searched piece by piece. */
const PATTERN = String.raw`(?m)^A:\s*\S|\\boxed\{|####\s*\S|(?i)answer is`;

/** Responses made of pieces that come close to an answer (a line start, case folding, blanks) in every order. */
function responses(n: number): string[] {
  const pieces = ['A:', 'A: ', 'A:\n', 'a:', '\n', '\r\n', '\r', ' ', '\t', 'x', 'é', '####', '#### ', '###', '\\boxed{', '\\boxed', 'boxed{', 'Answer IS', 'anſwer iſ', 'answer', ' is', 'ANSWER is', '"A:', '\\nA: 4'];
  const out: (string | null)[] = ['', 'A: 4', 'A:', 'A:   ', 'x\nA: 4', 'x\rA: 4', '####', '#### 72', '####\n', '####\n72', 'so \\boxed{72}', 'The answer is 72', 'THE ANSWER IS', '[{"role":"assistant","content":"x\\nA: 4"}]'];
  let k = 7;
  while (out.length < n) {
    let s = '';
    for (let j = 0, m = 1 + (k % 6); j < m; j++) {
      k = (k * 1103515245 + 12345) & 0x7fffffff;
      s += pieces[k % pieces.length];
    }
    out.push(s);
  }
  return out as string[];
}

describe('the no-answer check (real DuckDB)', () => {
  it('tells what the one pattern tells, over responses with no extracted answer, and is false where one was extracted', async () => {
    const { DuckDBInstance } = loadDuckDB();
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    try {
      const list = responses(4000);
      await conn.run(`create table t (i integer, response varchar, extracted_answer varchar)`);
      const appender = await conn.createAppender('t');
      list.forEach((r, i) => {
        for (const extracted of [null, '72']) {
          appender.appendInteger(i);
          appender.appendVarchar(r);
          if (extracted === null) appender.appendNull();
          else appender.appendVarchar(extracted);
          appender.endRow();
        }
      });
      appender.appendInteger(-1);
      appender.appendNull();
      appender.appendNull();
      appender.endRow();
      appender.closeSync();
      const rows = (
        await conn.runAndReadAll(
          `select i, response, extracted_answer, ${NO_ANSWER_SQL} as no_answer, not coalesce(regexp_matches(response, '${PATTERN.replace(/'/g, "''")}'), false) as expected from t order by i, extracted_answer nulls first`,
        )
      ).getRowObjectsJS();
      assert.equal(rows.length, list.length * 2 + 1);
      for (const r of rows) {
        const want = r['extracted_answer'] === null ? r['expected'] : false;
        assert.equal(r['no_answer'], want, JSON.stringify(r['response']));
      }
      // Both outcomes are covered, each piece of the pattern among the answers.
      const answered = rows.filter((r) => r['extracted_answer'] === null && r['no_answer'] === false).map((r) => String(r['response']));
      assert.ok(answered.length > 100 && answered.length < list.length - 100, `${answered.length} of ${list.length} answered`);
      for (const re of [/(^|\n)A:\s*\S/, /\\boxed\{/, /####\s*\S/, /answer is/i]) assert.ok(answered.some((s) => re.test(s)), String(re));
      assert.equal(rows.find((r) => r['i'] === -1)!['no_answer'], true);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});
