import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { initHarness } from '../../src/core/harness/init';
import { defaultStorePath, RolloutStore } from '../../src/core/store/store';
import { JobRecords, SshTransport, type JobRecord, type NamedProfile } from '../../src/core/jobs';
import { asJobUser, clusterProfile, startCluster, type ClusterInfo } from '../helpers/cluster';
import { repoRoot, tempDir } from '../helpers/tmp';
import { edit, evaluatedVersion, REWARD } from '../integration/harness/helpers';
import { activityBarItem, atWebviewWidth, chooseMenuItem, clippedIn, findFrame, openEditor, resultsDir, runCommand, withScreenshot, type CodeServer } from './codeServer';

const HELLO = '#!/bin/bash\nprintf \'hello from {{version}} on %s \\033[31m<b>red</b>\\033[0m\\n\' "$(hostname)"\nfor i in 1 2 3 4 5 6; do echo "step $i of 6"; sleep 1; done\nmkdir -p "$EVOTRAINER_JOB_DIR/rollout_data"\npython3 -c \'import json,sys\nfor k in range(4): print(json.dumps({"input": f"What is {k}+{k}?", "output": f"The answer is {2*k}", "gts": str(2*k), "score": float(k % 2 == 0), "step": 1}))\' > "$EVOTRAINER_JOB_DIR/rollout_data/1.jsonl"\necho "all done"\n';
const PASSPHRASE = 'open sesame';
/** A verl job's console as Ray prints it: a coloured actor prefix, numpy scalars, a progress bar redrawn with '\r' between the step lines. */
const VERL = '#!/bin/bash\necho "(TaskRunner pid=4242) TaskRunner hostname: $(hostname), PID: 4242"\nfor i in $(seq 1 12); do\n  e=$(python3 -c "print(round(1.2 * 0.9 ** $i, 4))")\n  printf \'\\033[36m(TaskRunner pid=4242)\\033[0m step:%d - actor/entropy:np.float64(%s) - actor/grad_norm:0.31 - critic/score/mean:np.float64(0.%d)\\n\' "$i" "$e" "$i"\n  printf \'Training Progress:  %d%%|###       | %d/12\\r\' "$((i * 8))" "$i"\n  sleep 1\ndone\necho "training done"\n';
const SLOW = '#!/bin/bash\necho "slow job started"\nsleep 300\necho never\n';

/**
 * Jobs from a real VS Code on a real cluster (sshd on 127.0.0.1 and a one-node Slurm, the
 * `test-slurm` profile in the evotrainer.clusters setting): launch a job of a ledger version
 * from the palette, see its state in the Runs view go running → completed and its log stream
 * into an output channel, cancel another from the Runs view's context menu. Screenshots of
 * the Runs view and the log in dark and light.
 */
describe('real VS Code: jobs on a Slurm cluster', () => {
  let server: CodeServer;
  let browser: Browser;
  let page: Page;
  let c: ClusterInfo;
  let settings: Record<string, unknown>;
  let locked: NamedProfile;
  let csp: string[] = [];
  // Registered before tempDir's removal hook: the editor stops before its folder goes.
  after(async () => {
    await browser?.close();
    await server?.stop();
    if (locked) await new SshTransport(locked).close();
    const left = records().filter((r) => r.remoteId && !['completed', 'failed', 'cancelled', 'timeout', 'oom', 'node_fail', 'lost'].includes(r.state));
    if (c && left.length) asJobUser(c, `scancel ${left.map((r) => r.remoteId).join(' ')}`);
  });
  const home = tempDir('evotrainer-e2e-jobs-');
  const workspace = path.join(home, 'harness $(x) "q"');
  const records = () => new JobRecords(path.join(workspace, '.evotrainer', 'jobs')).list();

  before(async () => {
    c = startCluster();
    const template = path.join(home, 'template');
    cpSync(path.join(repoRoot, 'harness-templates', 'starter'), template, { recursive: true });
    mkdirSync(path.join(template, 'jobs'));
    writeFileSync(path.join(template, 'jobs', 'hello.sbatch'), HELLO);
    writeFileSync(path.join(template, 'jobs', 'slow.sbatch'), SLOW);
    writeFileSync(path.join(template, 'jobs', 'verl.sbatch'), VERL);
    const h = (await initHarness(workspace, template)).harness;
    await evaluatedVersion(h, 'v0', (wt) => edit(wt, REWARD, '"acc": correct', '"acc": bool(correct)'), { pass_rate: 0.41 });
    const { name: _name, ...profile } = clusterProfile(c, 'slurm', { sbatch: { time: '00:10:00' }, poll_seconds: 0.5 });
    // A second way in to the same cluster whose key has a passphrase: a login that needs a person.
    const ssh = path.join(home, 'locked-ssh');
    mkdirSync(ssh, { mode: 0o700 });
    cpSync(c.clientKey, path.join(ssh, 'key'));
    execFileSync('ssh-keygen', ['-q', '-p', '-P', '', '-N', PASSPHRASE, '-f', path.join(ssh, 'key')]);
    writeFileSync(path.join(ssh, 'known_hosts'), readFileSync(c.knownHosts, 'utf8').replaceAll('127.0.0.1', 'localhost'));
    writeFileSync(path.join(ssh, 'config'), readFileSync(c.sshConfig, 'utf8').replace(/^Host .*/m, 'Host evolocked').replace(/HostName 127\.0\.0\.1/, 'HostName localhost').replace(/IdentityFile .*/, `IdentityFile ${path.join(ssh, 'key')}`).replace(/UserKnownHostsFile .*/, `UserKnownHostsFile ${path.join(ssh, 'known_hosts')}`));
    const { name: _n2, ...lockedProfile } = clusterProfile(c, 'slurm', { host: 'evolocked', ssh_config: path.join(ssh, 'config'), poll_seconds: 0.5 });
    locked = { name: 'locked', ...lockedProfile };
    await new SshTransport(locked).close(); // no shared connection left from an earlier run
    settings = { 'evotrainer.clusters': { 'test-slurm': profile, locked: lockedProfile } };
    mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
    writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify(settings));
    ({ server, browser, page, csp } = await openEditor({ workspace, home, viewport: { width: 1500, height: 900 } }));
  });

  const sidebar = () => page.locator('.sidebar');
  const runRow = (label: string) => sidebar().locator(`.monaco-list-row[aria-label^="${label}, "]`).first();
  const pickRow = (text: string) => page.locator('.quick-input-list .monaco-list-row', { hasText: text }).first();
  const toast = (text: string | RegExp) => page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
  const rowLabel = (label: string) => runRow(label).getAttribute('aria-label');
  const waitRow = (label: string, re: RegExp, timeout = 90_000) =>
    page.waitForFunction(([l, src]) => [...document.querySelectorAll('.sidebar .monaco-list-row')].some((e) => (e.getAttribute('aria-label') ?? '').startsWith(`${l}, `) && new RegExp(src!).test(e.getAttribute('aria-label') ?? '')), [label, re.source], { timeout });
  // Monaco draws spaces as no-break spaces.
  const logText = async () => (await page.locator('.part.panel .monaco-editor .view-lines').first().innerText()).replace(/\u00a0/g, ' ');
  const waitLog = (re: RegExp, timeout = 60_000) =>
    page.waitForFunction((src) => new RegExp(src).test(((document.querySelector('.part.panel .monaco-editor .view-lines') as HTMLElement | null)?.innerText ?? '').replace(/\u00a0/g, ' ')), re.source, { timeout });
  const shot = async (name: string) => {
    await page.mouse.move(5, 880);
    await new Promise((r) => setTimeout(r, 400));
    await page.screenshot({ path: path.join(resultsDir, name) });
  };

  async function launch(template: string, profile = 'test-slurm') {
    await runCommand(page, 'EvoTrainer: Launch Job…');
    await pickRow('v1').click({ timeout: 30_000 });
    await pickRow(template).click({ timeout: 30_000 });
    await page.locator('.quick-input-widget', { hasText: 'where to run' }).waitFor({ timeout: 15_000 });
    await pickRow(profile).click({ timeout: 15_000 });
  }

  it('launches a job of v1 from the palette: the Runs view shows it running then completed, its log streams into an output channel', () => withScreenshot(page, 'jobs-launch', async () => {
    await activityBarItem(page, 'EvoTrainer').click();
    await sidebar().locator('.pane-header', { hasText: 'Runs' }).first().waitFor({ timeout: 30_000 });
    // The empty secondary side bar takes a third of the window: close it.
    const aux = page.locator('.part.auxiliarybar');
    if (await aux.isVisible().catch(() => false)) await page.keyboard.press('Control+Alt+KeyB');
    // Collapse Versions, Findings and Skills so the Runs view has the room.
    for (const name of ['Versions', 'Findings', 'Skills']) {
      const header = sidebar().locator('.pane-header', { hasText: name }).first();
      if ((await header.getAttribute('aria-expanded')) === 'true') await header.click();
    }
    // A wider side bar, so the screenshots show the rows whole.
    const box = (await sidebar().boundingBox())!;
    await page.mouse.move(box.x + box.width + 1, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width + 260, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    const runsHeader = sidebar().locator('.pane-header', { hasText: 'Runs' }).first();
    if ((await runsHeader.getAttribute('aria-expanded')) !== 'true') await runsHeader.click();

    await launch('hello');
    await toast(/job j\S+ submitted to test-slurm \(#\d+\)/).waitFor({ timeout: 60_000 });
    const job = records().find((r) => r.template === 'hello')!;
    assert.equal(job.version, 'v1');
    assert.equal(job.profile.name, 'test-slurm');
    // The profile group and the job row, with state, elapsed against the 10-minute limit, run and Slurm id.
    await sidebar().locator('.monaco-list-row[aria-label^="test-slurm, slurm"]').first().waitFor({ timeout: 30_000 });
    await waitRow('hello v1', /^hello v1, running · \d+s \/ 10m 00s · run hello-v1 · #\d+$/);
    // The status bar counts running jobs; a click focuses the Runs view.
    const status = page.locator('.statusbar-item', { hasText: /1 job/ }).first();
    await status.waitFor({ timeout: 30_000 });
    // The log streams while the job runs (escapes stripped, markup as text).
    await page.locator('.part.panel .monaco-editor').first().waitFor({ timeout: 30_000 });
    await waitLog(/step 2 of 6/);
    assert.match(await logText(), /hello from v1 on \S+ <b>red<\/b>/);
    assert.doesNotMatch(await logText(), /\[31m|\x1b/);
    await shot('jobs-running-dark.png');
    await waitRow('hello v1', /^hello v1, completed · \d+s \/ 10m 00s · run hello-v1 · #\d+$/);
    await waitLog(/all done[\s\S]*── completed \(exit 0\)/);
    const lines = (await logText()).split('\n');
    assert.equal(lines.filter((l) => /^step 3 of 6/.test(l)).length, 1, 'each line once');
    assert.equal(records().find((r) => r.id === job.id)!.state, 'completed');
    await status.waitFor({ state: 'hidden', timeout: 30_000 });
    await shot('jobs-log-dark.png');
  }));

  it('Show Job Curves: a running verl job\'s step lines drawn as its log streams in', () => withScreenshot(page, 'jobs-curves', async () => {
    await page.keyboard.press('Escape');
    await launch('verl');
    await waitRow('verl v1', /^verl v1, running · /);
    const job = records().find((r) => r.template === 'verl')!;
    await runCommand(page, 'EvoTrainer: Show Job Curves');
    await pickRow('verl v1').click({ timeout: 30_000 });
    const frame = await findFrame(page, `[data-testid="line-job-${job.id}"]`, 60_000);
    const line = frame.locator(`[data-testid="line-job-${job.id}"]`);
    const points = async () => ((await line.getAttribute('d')) ?? '').split(/[ML]/).filter(Boolean).length;
    const early = await points();
    assert.ok(early >= 1 && early < 12, `drawn while running: ${early} point(s)`);
    assert.match(await frame.locator('.legend').innerText(), new RegExp(`job ${job.id} · verl-v1@v1\\s+live`));
    // The progress bar being drawn (no line end yet) shows in the status bar; a click opens the log.
    const bar = page.locator('.statusbar-item', { hasText: /Training Progress: +\d+%\|###/ }).first();
    await bar.waitFor({ timeout: 30_000 });
    assert.match((await bar.innerText()).replace(/\u00a0/g, ' '), new RegExp(`verl ${job.id}: Training Progress: +\\d+%\\|###`));
    await page.mouse.move(5, 880);
    await page.screenshot({ path: path.join(resultsDir, 'jobs-curves-live-dark.png') });
    assert.deepEqual(csp, [], 'no CSP violation on first paint');
    // It grows as the job prints, to the last step, and says when the job has ended.
    await frame.locator('.legend', { hasText: 'job ended' }).waitFor({ timeout: 90_000 });
    await bar.waitFor({ state: 'hidden', timeout: 30_000 });
    assert.equal(await points(), 12);
    assert.ok((await points()) > early);
    await frame.locator('[data-testid="curves-chart"]').focus();
    await page.keyboard.press('End');
    assert.match(await frame.locator('[data-testid="curves-readout"]').innerText(), /step 12 · job \S+ · verl-v1@v1 actor\/entropy 0\.3389/);
    await page.screenshot({ path: path.join(resultsDir, 'jobs-curves-ended-dark.png') });
    await atWebviewWidth(page, frame, 'jobs-curves', async () => assert.deepEqual(await clippedIn(frame, 'evo-curves-app'), [], 'nothing cut off at 600 px'));
    assert.deepEqual(csp, [], 'no CSP violation');
    await runCommand(page, 'View: Close All Editors');
  }));

  it('cancels a running job from the Runs view\'s context menu', () => withScreenshot(page, 'jobs-cancel', async () => {
    await page.keyboard.press('Escape');
    await launch('slow');
    await waitRow('slow v1', /^slow v1, running · /);
    const slow = records().find((r: JobRecord) => r.template === 'slow')!;
    await page.mouse.move(5, 880);
    await runRow('slow v1').click({ button: 'right' });
    const entry = page.locator('.monaco-menu .action-item', { hasText: 'Cancel Job' }).first();
    await entry.waitFor({ timeout: 15_000 });
    assert.equal(await page.locator('.monaco-menu .action-item', { hasText: 'Open Job Log' }).count(), 1);
    await chooseMenuItem(page, entry);
    await toast(`cancel sent to ${slow.id}`).waitFor({ timeout: 30_000 });
    await waitRow('slow v1', /^slow v1, cancelled · /, 60_000);
    assert.equal(records().find((r) => r.id === slow.id)!.state, 'cancelled');
    // A finished job offers no Cancel.
    await page.keyboard.press('Escape');
    await runRow('hello v1').click({ button: 'right' });
    await page.locator('.monaco-menu .action-item', { hasText: 'Open Job Log' }).first().waitFor({ timeout: 15_000 });
    assert.equal(await page.locator('.monaco-menu .action-item', { hasText: 'Cancel Job' }).count(), 0);
    await page.keyboard.press('Escape');
    await shot('jobs-cancelled-dark.png');
  }));

  it('fetches a finished job\'s outputs from its context menu and imports its rollouts into the store', () => withScreenshot(page, 'jobs-fetch', async () => {
    await page.mouse.move(5, 880);
    await page.keyboard.press('Escape');
    await runRow('hello v1').click({ button: 'right' });
    const entry = page.locator('.monaco-menu .action-item', { hasText: 'Fetch Job Outputs' }).first();
    await entry.waitFor({ timeout: 15_000 });
    await chooseMenuItem(page, entry);
    await toast(/1 file\(s\) fetched, 0 unchanged \((rsync|tar), verified\); 4 rollout\(s\) imported/).waitFor({ timeout: 60_000 });
    const job = records().find((r) => r.template === 'hello' && r.profile.name === 'test-slurm')!;
    assert.deepEqual(Object.keys(job.fetched), ['rollout_data/1.jsonl']);
    const store = await RolloutStore.open(defaultStorePath(workspace), { readOnly: true });
    try {
      assert.equal((await store.counts()).rollouts, 4);
    } finally {
      store.close();
    }
  }));

  it('a login that needs a person opens a terminal running the profile\'s login once, then the launch goes on', () => withScreenshot(page, 'jobs-login', async () => {
    await page.keyboard.press('Escape');
    await launch('hello', 'locked');
    await toast(/evolocked needs a login by you/).waitFor({ timeout: 60_000 });
    const term = page.locator('.part.panel .terminal-wrapper').first();
    // The terminal draws on a canvas: wait for its tab, then for ssh to ask.
    await page.locator('.part.panel', { hasText: 'Log in: locked' }).first().waitFor({ timeout: 30_000 });
    await new Promise((r) => setTimeout(r, 2500));
    await shot('jobs-login-dark.png');
    await term.click();
    await page.keyboard.type(PASSPHRASE);
    await page.keyboard.press('Enter');
    await toast(/job j\S+ submitted to locked \(#\d+\)/).waitFor({ timeout: 60_000 });
    await sidebar().locator('.monaco-list-row[aria-label^="locked, slurm · evolocked"]').first().waitFor({ timeout: 30_000 });
    const mine = records().filter((r) => r.profile.name === 'locked');
    assert.equal(mine.length, 1, 'the retry after the login finished the same job (its key), no second record');
    const job = mine[0]!;
    assert.equal(job.template, 'hello');
    // The log follows over the shared connection the login opened.
    await page.waitForFunction((id) => [...document.querySelectorAll('.sidebar .monaco-list-row')].some((e) => /^hello v1, completed/.test(e.getAttribute('aria-label') ?? '') && (e.getAttribute('aria-label') ?? '').includes(id)), `#${job.remoteId}`, { timeout: 90_000 });
    assert.equal(records().find((r) => r.id === job.id)!.state, 'completed');
  }));

  it('the Runs view and the log in the light theme', () => withScreenshot(page, 'jobs-light', async () => {
    writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify({ ...settings, 'workbench.colorTheme': 'Default Light Modern' }));
    await page.waitForFunction(() => document.querySelector('.monaco-workbench')?.classList.contains('vs'), null, { timeout: 30_000 });
    await runRow('hello v1').click();
    await waitLog(/all done/, 30_000);
    await new Promise((r) => setTimeout(r, 1000));
    assert.match((await rowLabel('hello v1'))!, /completed/);
    await shot('jobs-light.png');
    assert.deepEqual(csp, [], 'no CSP violation');
  }));
});
