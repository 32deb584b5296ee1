import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ENV_ALLOW, mountNamespace } from '../../../src/core/backtest/confine';
import { WorkerPool, workerScript } from '../../../src/core/backtest/pool';
import { evaluateUserDiagnostics } from '../../../src/core/diagnose/userDiagnostics';
import { RolloutStore } from '../../../src/core/store/store';
import { tempDir, writeScript } from '../../helpers/tmp';

// What harness code run by a backtest can reach: the real python3 worker, running a reward
// that tries each way out (the user's secrets in the environment, the harness checkout, a
// folder elsewhere, the network) and returns what it saw.

const SECRETS = { EVOTRAINER_LLM_API_KEY: 'sk-test-not-a-real-key', OPENAI_API_KEY: 'sk-test-2', AWS_SECRET_ACCESS_KEY: 'aws-test', GITHUB_TOKEN: 'ghp_test' };

const PROBE = `
import ctypes, json, os, socket, subprocess

def write(p):
    try:
        with open(p, "w") as f:
            f.write("written by harness code")
        return True
    except OSError:
        return False

def look(t):
    seen = {"secrets": sorted(k for k in t["secret_names"] if k in os.environ), "home": os.environ.get("HOME"),
            "checkout": write(os.path.join(t["checkout"], "written-by-harness-code")), "elsewhere": write(t["elsewhere"]),
            "tree": write("written-in-its-tree"), "scratch": write(os.path.join(os.environ.get("TMPDIR", "/nonexistent"), "x"))}
    try:
        socket.create_connection(("127.0.0.1", t["port"]), timeout=2).close()
        seen["network"] = True
    except OSError:
        seen["network"] = False
    # undo the read-only root: with the mount program, then with the system call
    subprocess.run(["mount", "-o", "remount,bind,rw", "/"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ctypes.CDLL(None).mount(None, b"/", None, ctypes.c_ulong(32 | 4096), None)
    seen["checkout_after_remount"] = write(os.path.join(t["checkout"], "written-after-remount"))
    try:
        os.kill(t["host_pid"], 0)  # the test process: outside the worker's PID namespace
        seen["signal"] = True
    except OSError:
        seen["signal"] = False
    return seen

def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    return {"score": 1.0, "seen": look(json.loads(ground_truth))}
`;

/** (The worker sends booleans as 1 / 0.) */
interface Seen {
  secrets: string[];
  home: string;
  checkout: number;
  elsewhere: number;
  tree: number;
  scratch: number;
  network: number;
  checkout_after_remount: number;
  signal: number;
}

/** Does this machine let a process have its own mount and network namespaces (as CI runs: root)? */
const asRoot = spawnSync('unshare', ['--mount', '--net', 'true']).status === 0;
const inUserNamespace = spawnSync('unshare', ['--user', '--map-root-user', '--mount', '--net', 'true']).status === 0;
const namespaces = asRoot || inUserNamespace;

describe('backtest workers run harness code confined', () => {
  const base = tempDir('evotrainer-confine-');
  const tree = path.join(base, 'tree');
  const checkout = path.join(base, 'harness checkout $(x)');
  let server: Server;
  let connections = 0;
  let port = 0;
  const saved: Record<string, string | undefined> = {};
  before(async () => {
    mkdirSync(path.join(tree, 'reward'), { recursive: true });
    mkdirSync(checkout);
    writeFileSync(path.join(tree, 'reward', 'probe.py'), PROBE);
    for (const [k, v] of Object.entries(SECRETS)) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
    server = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  after(() => {
    server?.close();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  async function probe(elsewhere: string): Promise<{ seen: Seen; pool: WorkerPool }> {
    const pool = await WorkerPool.start({ root: tree, workers: 1, timeoutSeconds: 10, functions: [{ name: 'probe', path: 'reward/probe.py', function: 'compute_score', kind: 'verl' }] });
    try {
      const truth = JSON.stringify({ secret_names: Object.keys(SECRETS), checkout, elsewhere, port, host_pid: process.pid });
      const [r] = await pool.map('probe', [{ data_source: 'x', solution_str: 'x', ground_truth: truth, extra_info: null }]);
      assert.equal(r!.error, null, String(r!.error));
      return { seen: (r!.value as { seen: Seen }).seen, pool };
    } finally {
      await pool.close();
    }
  }

  it('no secrets from the environment, no writes outside its tree and scratch folder, no network (where the machine allows namespaces)', async () => {
    const elsewhere = path.join(tmpdir(), `evotrainer-written-by-harness-code-${process.pid}`);
    const { seen, pool } = await probe(elsewhere);
    console.log(`backtest worker isolation on this machine: ${pool.isolation.detail}`);
    assert.deepEqual(seen.secrets, [], 'the user\'s API keys and tokens reached harness code');
    assert.notEqual(seen.home, process.env.HOME);
    assert.equal(pool.isolation.readOnlyRoot, namespaces, `unshare ${namespaces ? 'works' : 'does not work'} here, yet the worker was ${pool.isolation.readOnlyRoot ? '' : 'not '}confined`);
    assert.equal(pool.isolation.network, namespaces);
    assert.equal(seen.tree, 1, 'its own tree copy stays writable');
    assert.equal(seen.scratch, 1, 'its scratch folder (TMPDIR) is writable');
    if (namespaces) {
      assert.equal(seen.checkout, 0, 'harness code wrote into the harness checkout');
      assert.equal(existsSync(path.join(checkout, 'written-by-harness-code')), false);
      assert.equal(seen.elsewhere, 0, `harness code wrote ${elsewhere}`);
      assert.equal(existsSync(elsewhere), false);
      assert.equal(seen.network, 0, 'harness code reached the network');
      assert.equal(seen.checkout_after_remount, 0, 'harness code remounted the root read-write and wrote into the checkout');
      assert.equal(existsSync(path.join(checkout, 'written-after-remount')), false);
      assert.equal(seen.signal, 0, 'harness code could signal a process outside its PID namespace');
      assert.equal(connections, 0);
      assert.match(pool.isolation.detail, /no network, a read-only filesystem except its tree copy and scratch folder, and a scrubbed environment/);
    }
  });

  it('where namespaces are not permitted: the environment is still scrubbed and the report says what is missing', async () => {
    process.env.EVOTRAINER_BACKTEST_UNSHARE = '0';
    try {
      const { seen, pool } = await probe(path.join(base, 'unconfined-write'));
      assert.deepEqual(seen.secrets, []);
      assert.equal(pool.isolation.readOnlyRoot, false);
      assert.match(pool.isolation.detail, /harness code ran WITHOUT network or filesystem confinement \(EVOTRAINER_BACKTEST_UNSHARE=0\); scrubbed environment \(PATH, /);
      // the degraded worker really is unconfined: this is what the report warns about
      assert.equal(seen.checkout, 1);
    } finally {
      delete process.env.EVOTRAINER_BACKTEST_UNSHARE;
    }
  });

  /** A python3 that logs how it was started to `log` (and, with `refuse`, will not start outside a user namespace). */
  function loggingPython(name: string, log: string, refuse = false): string {
    const guard = refuse ? 'if grep -q 4294967295 /proc/self/uid_map; then echo "refusing to start outside a user namespace" >&2; exit 1; fi\n' : '';
    return writeScript(base, name, `echo "$*" >> '${log}'\n${guard}exec python3 "$@"`);
  }

  it('the workers check their own confinement as they start: no separate probe runs first, one interpreter forks them', async () => {
    const log = path.join(base, 'first-start.log');
    const pool = await WorkerPool.start({ root: tree, python: loggingPython('python-first', log), workers: 2, functions: [{ name: 'probe', path: 'reward/probe.py', function: 'compute_score', kind: 'verl' }] });
    await pool.close();
    assert.equal(pool.isolation.readOnlyRoot, namespaces);
    const starts = readFileSync(log, 'utf8').trim().split('\n');
    assert.equal(starts.length, 1, starts.join('\n'));
    assert.match(starts[0]!, /"forks":\[\[3,4\],\[5,6\]\]/);
    assert.ok(starts.every((l) => !l.includes('--probe')), `a probe ran before the workers: ${starts.join('\n')}`);
    if (namespaces) assert.ok(starts.every((l) => l.includes('"check"')), 'the workers were not told where to check their confinement');
  });

  it('a worker whose confinement does not hold exits before any harness code loads', { skip: !namespaces && 'this machine permits no namespaces' }, () => {
    const scratch = mkdtempSync(path.join(base, 'scratch-'));
    const marker = path.join(base, 'written-by-harness-code-at-import');
    writeFileSync(path.join(tree, 'reward', 'writes.py'), `open(${JSON.stringify(marker)}, "w").write("x")\ndef compute_score(*a):\n    return 1.0\n`);
    // the scratch folder's parent left writable: what the worker checks
    const config = { root: tree, writable: [tree, base, scratch], outer_mount_namespace: mountNamespace(), check: scratch };
    const prefix = asRoot ? ['unshare'] : ['unshare', '--user', '--map-root-user'];
    const r = spawnSync(prefix[0]!, [...prefix.slice(1), '--mount', '--net', '--pid', '--fork', '--kill-child', 'python3', workerScript(), JSON.stringify(config)], {
      input: JSON.stringify({ op: 'load', name: 'w', path: 'reward/writes.py', function: 'compute_score', kind: 'verl' }) + '\n',
      encoding: 'utf8',
    });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /the backtest worker's confinement does not hold: the parent folder is still writable/);
    assert.doesNotMatch(r.stdout, /"ready"/);
    assert.equal(existsSync(marker), false, 'harness code loaded in a worker whose confinement did not hold');
  });

  it('where the likely way to confine fails, the probe finds what holds and the workers start that way', { skip: !(asRoot && inUserNamespace) && 'needs root and user namespaces' }, async () => {
    const log = path.join(base, 'fallback.log');
    const pool = await WorkerPool.start({ root: tree, python: loggingPython('python-userns-only', log, true), workers: 2, functions: [{ name: 'probe', path: 'reward/probe.py', function: 'compute_score', kind: 'verl' }] });
    try {
      const [r] = await pool.map('probe', [{ data_source: 'x', solution_str: 'x', ground_truth: JSON.stringify({ secret_names: [], checkout, elsewhere: path.join(base, 'fallback-write'), port, host_pid: process.pid }), extra_info: null }]);
      assert.equal(r!.error, null, String(r!.error));
      assert.equal((r!.value as { seen: Seen }).seen.checkout, 0);
    } finally {
      await pool.close();
    }
    assert.deepEqual(pool.isolation.prefix.slice(0, 3), ['unshare', '--user', '--map-root-user']);
    assert.equal(pool.isolation.readOnlyRoot, true);
    assert.match(readFileSync(log, 'utf8'), /--probe/);
  });

  it('the allow-list holds no secret-looking names', () => {
    for (const name of ENV_ALLOW) assert.doesNotMatch(name, /KEY|TOKEN|SECRET|PASS|AUTH|CRED/i);
  });

  it('script metrics run under the same confinement', async () => {
    const harness = path.join(base, 'metric harness');
    mkdirSync(path.join(harness, 'diagnostics', 'metrics'), { recursive: true });
    // value: 1 if a secret was visible + 2 if it could write into the harness + 4 if it reached the network
    writeFileSync(
      path.join(harness, 'diagnostics', 'metrics', 'escape.py'),
      `import json, os, socket, sys\nsys.stdin.read()\nv = 1 if any(k in os.environ for k in ${JSON.stringify(Object.keys(SECRETS))}) else 0\ntry:\n    open(${JSON.stringify(path.join(harness, 'written'))}, "w").write("x")\n    v += 2\nexcept OSError:\n    pass\ntry:\n    socket.create_connection(("127.0.0.1", ${port}), timeout=2).close()\n    v += 4\nexcept OSError:\n    pass\nprint(json.dumps({"value": v}))\n`,
    );
    const store = await RolloutStore.open(':memory:');
    try {
      const r = await evaluateUserDiagnostics(store, harness, {}, { trust: true });
      assert.deepEqual(r.problems, []);
      assert.equal(r.metrics.find((m) => m.name === 'escape')?.value, namespaces ? 0 : 2);
    } finally {
      store.close();
    }
  });
});
