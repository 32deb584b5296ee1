import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { sweAgentImporter } from '../../../src/core/store/importers/sweAgent';
import { externalDir, requireSharedData } from '../../helpers/data';
import { readAll } from '../../helpers/importers';

requireSharedData();

const demo = (dir: string) => path.join(externalDir, 'swe-agent', 'demos', dir, 'marshmallow-code__marshmallow-1867.traj');

describe('SWE-agent importer on SWE-agent\'s own function-calling replays', () => {
  it('reads each tool call as one action, with its kind, and the submitted patch', async () => {
    // The actions, first lines, listed with a python3 one-off from the files.
    const cases: [string, string[]][] = [
      ['replay__marshmallow-code__marshmallow-1867__function_calling__install-1', ['edit', 'edit', 'test', 'search', 'search', 'search', 'edit', 'edit', 'test', 'command', 'submit']],
      ['replay__marshmallow-code__marshmallow-1867__function_calling_replace__install-1', ['edit', 'edit', 'test', 'search', 'search', 'search', 'edit', 'edit', 'test', 'command', 'submit']],
      ['replay__marshmallow-code__marshmallow-1867__function_calling_replace_from_source', ['search', 'search', 'command', 'edit', 'edit', 'test', 'search', 'search', 'search', 'edit', 'test', 'command', 'submit']],
    ];
    for (const [dir, kinds] of cases) {
      const { good, bad } = await readAll(sweAgentImporter, demo(dir));
      assert.equal(bad.length, 0);
      const r = good[0]!.record;
      assert.equal(r.numTurns, kinds.length, dir);
      assert.equal(r.steps!.length, 2 * kinds.length);
      assert.deepEqual(r.steps!.filter((s) => s.role === 'assistant').map((s) => s.actionKind), kinds, dir);
      assert.equal(r.steps!.filter((s) => s.formatError).length, 0);
      assert.equal(r.extra!.patch_submitted, true);
      assert.equal(r.correct, null, 'no verdict beside a demonstration');
      assert.equal(r.stopReason, 'submitted');
    }
  });
});
