/**
 * Writers of training-curve files in the formats the trainers write, for tests: verl's
 * console step lines (verl/utils/logger/aggregate_logger.py, concat_dict_to_str, behind a
 * Ray actor prefix), TensorBoard event files (TFRecord framing around Event protobufs,
 * encoded with protobufjs from TensorBoard's event/summary/tensor schema), MLflow's local
 * file store (mlruns/<experiment>/<run>/metrics/<key>: "<timestamp ms> <value> <step>").
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { EventType } from '../../src/core/store/curves/tensorboard';
import { frameRecord } from '../../src/core/store/curves/tfrecord';

export type StepValues = Record<string, number>;

/** The curves a verl GRPO run logs that the health report reads. */
export interface TrainStep extends StepValues {
  'actor/entropy': number;
  'actor/grad_norm': number;
  'actor/pg_clipfrac': number;
  'critic/score/mean': number;
}

/** verl's console line for one step, as a Ray actor prints it (numpy scalars as numpy 2 reprs them). */
export function verlStepLine(step: number, values: StepValues, prefix = '(TaskRunner pid=4242) '): string {
  return `${prefix}step:${step} - ${Object.entries(values).map(([k, v]) => `${k}:np.float64(${v})`).join(' - ')}`;
}

export function writeVerlLog(file: string, steps: StepValues[]): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const lines = ['(TaskRunner pid=4242) TaskRunner hostname: node-1, PID: 4242'];
  steps.forEach((v, i) => lines.push(verlStepLine(i + 1, v), `Training Progress: ${i + 1}/${steps.length}`));
  writeFileSync(file, `${lines.join('\n')}\n`);
}

/** One framed Event record; `summary` values are scalars (simple_value) or tensors. */
export function eventRecord(e: { wall_time: number; step?: number; file_version?: string; summary?: { value: Record<string, unknown>[] } }): Buffer {
  return frameRecord(EventType.encode(EventType.fromObject(e)).finish());
}

/** A TensorBoard event file as torch's SummaryWriter.add_scalar writes it: a version record, then one event per scalar. */
export function writeEventFile(dir: string, steps: StepValues[], t0 = 1_764_000_000): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `events.out.tfevents.${t0}.node-1.4242.0`);
  const records = [eventRecord({ wall_time: t0, file_version: 'brain.Event:2' })];
  steps.forEach((v, i) => {
    for (const [tag, value] of Object.entries(v)) records.push(eventRecord({ wall_time: t0 + 60 * (i + 1), step: i + 1, summary: { value: [{ tag, simple_value: value }] } }));
  });
  writeFileSync(file, Buffer.concat(records));
  return file;
}

/** An MLflow run in a local file store; returns the run directory. */
export function writeMlflowRun(mlruns: string, runId: string, runName: string, steps: StepValues[], t0 = 1_764_000_000_000): string {
  const dir = path.join(mlruns, '0', runId);
  mkdirSync(path.join(dir, 'metrics'), { recursive: true });
  writeFileSync(path.join(mlruns, '0', 'meta.yaml'), 'artifact_location: file:///tmp/mlruns/0\nexperiment_id: \'0\'\nlifecycle_stage: active\nname: Default\n');
  writeFileSync(
    path.join(dir, 'meta.yaml'),
    `artifact_uri: file:///tmp/mlruns/0/${runId}/artifacts\nend_time: null\nentry_point_name: ''\nexperiment_id: '0'\nlifecycle_stage: active\nrun_id: ${runId}\nrun_name: ${runName}\nrun_uuid: ${runId}\nsource_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: ${t0}\nstatus: 1\ntags: []\nuser_id: trainer\n`,
  );
  steps.forEach((v, i) => {
    for (const [key, value] of Object.entries(v)) {
      const file = path.join(dir, 'metrics', ...key.replace(/@/g, '_at_').split('/'));
      mkdirSync(path.dirname(file), { recursive: true });
      appendFileSync(file, `${t0 + 1000 * (i + 1)} ${value} ${i + 1}\n`);
    }
  });
  return dir;
}

/** Entropy collapsing while the score rises (no entropy bonus, no clip-higher). */
export function collapsingRun(n = 60): TrainStep[] {
  return Array.from({ length: n }, (_, i) => ({
    'actor/entropy': 0.02 + 0.6 * Math.exp(-(i + 1) / 10),
    'actor/grad_norm': 0.3 + 0.01 * (i % 5),
    'actor/pg_clipfrac': 0.002,
    'critic/score/mean': 0.2 + 0.5 * (1 - Math.exp(-(i + 1) / 15)),
  }));
}

/** Entropy holding its level (noisy, slightly lower) while the score rises. */
export function healthyRun(n = 60): TrainStep[] {
  return Array.from({ length: n }, (_, i) => ({
    'actor/entropy': 0.6 - 0.0015 * i + 0.03 * Math.sin(i * 1.7),
    'actor/grad_norm': 0.3 + 0.01 * (i % 5),
    'actor/pg_clipfrac': 0.003,
    'critic/score/mean': 0.2 + 0.3 * (1 - Math.exp(-(i + 1) / 20)),
  }));
}
