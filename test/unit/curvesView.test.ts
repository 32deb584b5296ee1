import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { LIVE_POINTS_MAX, LiveCurves } from '../../src/viewer/curves/live';
import type { LiveSeries } from '../../src/viewer/curves/protocol';
import { formatValue, linePath, nearestDumpedStep, nearestIndex, niceTicks, valueExtent, type ChartPoint } from '../../src/webview/curves/chart';
import { verlStepLine } from '../helpers/curves';
import { repoRoot } from '../helpers/tmp';

const fixture = path.join(repoRoot, 'test', 'fixtures', 'curves', 'verl-console', 'train.log');
const pts = (values: number[], rollouts: Record<number, number> = {}): ChartPoint[] => values.map((value, i) => ({ step: i + 1, value, rollouts: rollouts[i + 1] ?? 0 }));

describe('curves chart arithmetic', () => {
  it('ticks are round numbers covering the range', () => {
    assert.deepEqual(niceTicks(1, 60, 6), [10, 20, 30, 40, 50, 60]);
    assert.deepEqual(niceTicks(0.03, 1.27, 5), [0.2, 0.4, 0.6, 0.8, 1, 1.2]);
    assert.deepEqual(niceTicks(5, 5), [5]);
    assert.deepEqual(niceTicks(NaN, 1), []);
  });

  it('the value range skips nan and inf, and a flat curve still gets a height', () => {
    assert.deepEqual(valueExtent([1, NaN, 3, Infinity], 0), [1, 3]);
    assert.deepEqual(valueExtent([2, 2]), [1.9, 2.1]);
    assert.equal(valueExtent([NaN]), null);
  });

  it('a non-finite value breaks the line instead of drawing to zero', () => {
    const d = linePath(pts([1, 2, NaN, 4, 5]), (s) => s * 10, (v) => 100 - v);
    assert.equal(d, 'M10.0,99.0L20.0,98.0M40.0,96.0L50.0,95.0');
  });

  it('more points than pixels: each pixel column keeps its first, extremes and last, so a spike survives', () => {
    const values = Array.from({ length: 100_000 }, (_, i) => (i === 54_321 ? 50 : Math.sin(i / 1000)));
    const d = linePath(pts(values), (s) => (s / 100_000) * 500, (v) => 300 - v * 5);
    const segments = d.split(/[ML]/).filter(Boolean);
    assert.ok(segments.length <= 501 * 4, `${segments.length} segments for 500 px`);
    assert.ok(segments.some((s) => s.endsWith(`,${(300 - 50 * 5).toFixed(1)}`)), 'the spike is drawn');
  });

  it('finds the nearest step, and the nearest step with rollouts dumped', () => {
    const p = pts([1, 2, 3, 4, 5, 6], { 2: 8, 6: 8 });
    assert.equal(nearestIndex(p, 3.4), 2);
    assert.equal(nearestIndex(p, 99), 5);
    assert.equal(nearestIndex([], 1), -1);
    assert.equal(nearestDumpedStep(p, 4), 2, 'a tie goes to the earlier step');
    assert.equal(nearestDumpedStep(p, 5), 6);
    assert.equal(nearestDumpedStep(pts([1, 2]), 1), null);
  });

  it('formats values as logged', () => {
    assert.deepEqual([formatValue(0.41234567), formatValue(NaN), formatValue(-Infinity), formatValue(123456), formatValue(0.0001234), formatValue(null)], ['0.4123', 'nan', '-inf', '1.23e+5', '1.23e-4', '—']);
  });
});

describe('live curves from a streaming job log', () => {
  it('reads a real verl job log fed in arbitrary chunks exactly as a whole', () => {
    const log = readFileSync(fixture, 'utf8');
    const whole = new LiveCurves();
    whole.feed('j1', 'train-v3', 'v3', '', log);
    const chunked = new LiveCurves();
    const seen: LiveSeries[] = [];
    chunked.onDidChange((s) => seen.push(structuredClone(s)));
    // Chunks cut through lines, escape sequences and numbers, as a poll of a growing file does.
    for (let i = 0, k = 1; i < log.length; i += k, k = (k * 7 + 3) % 97 || 1) chunked.feed('j1', 'train-v3', 'v3', '', log.slice(i, i + k));
    assert.deepEqual(chunked.get('j1'), whole.get('j1'));
    const entropy = whole.get('j1')!.metrics['actor/entropy']!;
    assert.ok(entropy.length >= 5, JSON.stringify(entropy));
    assert.deepEqual(entropy[0], [1, 0.6132]);
    assert.ok(seen.length >= entropy.length, 'listeners hear of each step as it arrives');
  });

  it('a line still being written waits for its end; a resumed run replaces the steps it logs again; array tasks stay apart', () => {
    const live = new LiveCurves();
    const line = verlStepLine(1, { 'actor/entropy': 0.9 });
    assert.equal(live.feed('j', 'r', null, '0', line.slice(0, 30)), 0);
    assert.equal(live.feed('j', 'r', null, '1', `${verlStepLine(7, { 'actor/entropy': 0.1 })}\n`), 1, 'another task, its own line');
    assert.equal(live.feed('j', 'r', null, '0', `${line.slice(30)}\n${verlStepLine(2, { 'actor/entropy': 0.8 })}\n`), 2);
    live.feed('j', 'r', null, '0', `Resuming from checkpoint global_step_1\n${verlStepLine(2, { 'actor/entropy': 0.75 })}\n`);
    assert.deepEqual(live.get('j')!.metrics['actor/entropy'], [[7, 0.1], [1, 0.9], [2, 0.75]], 'in the order logged; the chart sorts by step');
    live.finish('j');
    assert.equal(live.get('j')!.done, true);
    // A job whose log printed no step line is not a series.
    live.feed('hello', 'r', null, '', 'hello from v1\nstep 1 of 6\n');
    assert.deepEqual(live.all().map((s) => s.jobId), ['j']);
  });

  it('stays bounded on a very long log', () => {
    const live = new LiveCurves();
    const lines: string[] = [];
    for (let s = 1; s <= LIVE_POINTS_MAX + 500; s++) lines.push(verlStepLine(s, { 'actor/entropy': 1 / s }));
    live.feed('j', 'r', null, '', `${lines.join('\n')}\n`);
    assert.equal(live.get('j')!.metrics['actor/entropy']!.length, LIVE_POINTS_MAX);
  });
});
