import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseArgs, UsageError } from '../../src/cli/args';

const spec = { json: { type: 'boolean', description: '' }, python: { type: 'string', description: '' } } as const;

describe('cli argument parser', () => {
  it('reads booleans, values in both forms, positionals and --', () => {
    assert.deepEqual(parseArgs(['--json', 'a', '--python', '/x y', 'b'], spec), { flags: { json: true, python: '/x y' }, positionals: ['a', 'b'] });
    assert.deepEqual(parseArgs(['--python=/a=b', '--', '--json'], spec), { flags: { python: '/a=b' }, positionals: ['--json'] });
  });
  it('refuses unknown options, missing values and values on booleans', () => {
    assert.throws(() => parseArgs(['--jsn'], spec), (e: unknown) => e instanceof UsageError && /unknown option --jsn/.test(e.message));
    assert.throws(() => parseArgs(['--python'], spec), /--python needs a value/);
    assert.throws(() => parseArgs(['--json=yes'], spec), /--json takes no value/);
  });
});
