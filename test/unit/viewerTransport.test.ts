import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as z from 'zod/mini';
import { DoctorMethods } from '../../src/viewer/doctor/protocol';
import { HealthMethods } from '../../src/viewer/health/protocol';
import { IpcCommand, IpcRequest, type HostProtocol } from '../../src/viewer/protocol';
import { ResultMethods } from '../../src/viewer/backtest/protocol';
import { CurvesMethods } from '../../src/viewer/curves/protocol';
import { LineageMethods } from '../../src/viewer/lineage/protocol';
import { HostTransport } from '../../src/viewer/transport';
import { VersionMethods } from '../../src/viewer/version/protocol';

const Add = new IpcRequest<{ a: number; b: number }, number>('probe/add', z.strictObject({ a: z.number(), b: z.number() }));
const Fail = new IpcRequest<void, number>('probe/fail', null);
const Poke = new IpcCommand<{ n: number }>('probe/poke', z.strictObject({ n: z.number().check(z.int()) }));
const Probe = { add: Add, fail: Fail, poke: Poke };

function probe() {
  const logs: string[] = [];
  const pokes: number[] = [];
  const transport = new HostTransport('probe', (level, m) => logs.push(`${level} ${m}`)).serve(Probe, {
    add: ({ a, b }) => a + b,
    fail: () => {
      throw new Error('no store here');
    },
    poke: ({ n }) => void pokes.push(n),
  });
  return { transport, logs, pokes };
}

describe('viewer transport (host side)', () => {
  it('answers a request by its id with the handler result', async () => {
    const { transport } = probe();
    assert.deepEqual(await transport.receive({ id: 41, method: 'probe/add', params: { a: 2, b: 3 } }), { id: 41, result: 5 });
  });

  it('checks params against the schema attached to the message type before the handler runs', async () => {
    const { transport, logs, pokes } = probe();
    const r = await transport.receive({ id: 1, method: 'probe/add', params: { a: 2, b: '3' } });
    assert.ok(r && 'error' in r && r.code === 'invalid_params', JSON.stringify(r));
    assert.match(r.error, /invalid parameters for "probe\/add"/);
    // A command is never answered: a bad one is dropped with a log line, a good one runs.
    assert.equal(await transport.receive({ method: 'probe/poke', params: { n: 1.5 } }), null);
    assert.equal(await transport.receive({ method: 'probe/poke', params: { n: 4 } }), null);
    assert.deepEqual(pokes, [4]);
    assert.ok(logs.some((l) => /^warn \[probe\] invalid parameters for "probe\/poke"/.test(l)), logs.join('\n'));
  });

  it("answers a handler's error as a failure, with its message, and logs it", async () => {
    const { transport, logs } = probe();
    assert.deepEqual(await transport.receive({ id: 2, method: 'probe/fail' }), { id: 2, error: 'no store here', code: 'failed' });
    assert.ok(logs.includes('error [probe] "probe/fail" failed: no store here'), logs.join('\n'));
  });

  it('refuses unknown methods, requests without an id, commands with one, and malformed messages', async () => {
    const { transport, pokes } = probe();
    assert.deepEqual(await transport.receive({ id: 3, method: 'probe/exec', params: {} }), { id: 3, error: 'unknown method "probe/exec"', code: 'unknown_method' });
    assert.equal(await transport.receive({ method: 'probe/add', params: { a: 1, b: 1 } }), null);
    const withId = await transport.receive({ id: 4, method: 'probe/poke', params: { n: 1 } });
    assert.ok(withId && 'error' in withId && withId.code === 'invalid_params');
    assert.deepEqual(pokes, []);
    for (const bad of [null, 'probe/add', [], { method: 7 }, { id: 1.5, method: 'probe/add' }, { id: -1, method: 'probe/add' }]) assert.equal(await transport.receive(bad), null, JSON.stringify(bad));
  });

  it('refuses a method map that serves a method twice', () => {
    const { transport } = probe();
    assert.throws(() => transport.serve({ again: Poke }, { again: () => undefined }), /"probe\/poke" is served twice/);
  });

  it("every feature's messages carry the schema of their params (only parameterless ones have none)", () => {
    const features: Record<string, HostProtocol> = { DoctorMethods, HealthMethods, LineageMethods, VersionMethods, ResultMethods, CurvesMethods };
    for (const [name, protocol] of Object.entries(features)) {
      for (const type of Object.values(protocol)) {
        const parameterless = /\/(refresh|rerun)$/.test(type.method);
        assert.equal(type.schema === null, parameterless, `${name}: ${type.method}`);
      }
    }
    assert.ok(!LineageMethods.openVersion.schema!.safeParse({ id: '../v1' }).success);
    assert.ok(LineageMethods.openVersion.schema!.safeParse({ id: 'v12' }).success);
  });
});
