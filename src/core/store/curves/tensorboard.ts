import path from 'node:path';
import protobuf from 'protobufjs';
import { readTfRecords } from './tfrecord';
import type { CurveItem, CurvePoint, CurveReader } from './types';

/**
 * The part of TensorBoard's event schema that scalars travel in, with TensorFlow's field
 * numbers (tensorflow/core/util/event.proto, tensorflow/core/framework/summary.proto,
 * tensorflow/core/framework/tensor.proto; TensorBoard ships the same files under
 * tensorboard/compat/proto/). Fields not named here are skipped when decoding.
 */
export const EVENT_PROTO = `
syntax = "proto3";
package tensorboard;

enum DataType {
  DT_INVALID = 0;
  DT_FLOAT = 1;
  DT_DOUBLE = 2;
  DT_INT32 = 3;
  DT_INT64 = 9;
  DT_BOOL = 10;
  DT_BFLOAT16 = 14;
  DT_HALF = 19;
}

message TensorProto {
  DataType dtype = 1;
  bytes tensor_content = 4;
  repeated int32 half_val = 13 [packed = true];
  repeated float float_val = 5 [packed = true];
  repeated double double_val = 6 [packed = true];
  repeated int32 int_val = 7 [packed = true];
  repeated int64 int64_val = 10 [packed = true];
  repeated bool bool_val = 11 [packed = true];
}

message SummaryMetadata {
  message PluginData {
    string plugin_name = 1;
    bytes content = 2;
  }
  PluginData plugin_data = 1;
}

message Summary {
  message Value {
    string node_name = 7;
    string tag = 1;
    SummaryMetadata metadata = 9;
    oneof value {
      float simple_value = 2;
      TensorProto tensor = 8;
    }
  }
  repeated Value value = 1;
}

message Event {
  double wall_time = 1;
  int64 step = 2;
  oneof what {
    string file_version = 3;
    Summary summary = 5;
  }
}
`;

const root = protobuf.parse(EVENT_PROTO, { keepCase: true }).root;
export const EventType = root.lookupType('tensorboard.Event');

interface TensorValue {
  dtype?: number;
  tensor_content?: Uint8Array;
  half_val?: number[];
  float_val?: number[];
  double_val?: number[];
  int_val?: number[];
  int64_val?: (number | { toNumber(): number })[];
  bool_val?: boolean[];
}

interface SummaryValue {
  tag?: string;
  simple_value?: number;
  tensor?: TensorValue;
  value?: 'simple_value' | 'tensor';
}

interface EventValue {
  wall_time?: number;
  step?: number | { toNumber(): number };
  summary?: { value?: SummaryValue[] };
}

const asNumber = (v: number | { toNumber(): number }): number => (typeof v === 'number' ? v : v.toNumber());

/** IEEE half precision (DT_HALF's half_val holds the 16 bits in an int32). */
function halfToNumber(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * 2 ** -14 * (f / 1024);
  if (e === 31) return f ? NaN : s * Infinity;
  return s * 2 ** (e - 15) * (1 + f / 1024);
}

/** The single number a scalar tensor holds (TF2's tf.summary.scalar writes these); undefined for anything else. */
export function scalarOfTensor(t: TensorValue): number | undefined {
  const one = <T>(xs: T[] | undefined) => (xs && xs.length === 1 ? xs[0] : undefined);
  const content = t.tensor_content && t.tensor_content.length ? Buffer.from(t.tensor_content) : null;
  switch (t.dtype) {
    case 1:
      return content?.length === 4 ? content.readFloatLE(0) : one(t.float_val);
    case 2:
      return content?.length === 8 ? content.readDoubleLE(0) : one(t.double_val);
    case 3:
      return content?.length === 4 ? content.readInt32LE(0) : one(t.int_val);
    case 9: {
      if (content?.length === 8) return Number(content.readBigInt64LE(0));
      const v = one(t.int64_val);
      return v === undefined ? undefined : asNumber(v);
    }
    case 10: {
      const v = content?.length === 1 ? content[0] !== 0 : one(t.bool_val);
      return v === undefined ? undefined : v ? 1 : 0;
    }
    case 14:
      return content?.length === 2 ? new Float32Array(new Uint32Array([content.readUInt16LE(0) << 16]).buffer)[0] : undefined;
    case 19: {
      if (content?.length === 2) return halfToNumber(content.readUInt16LE(0));
      const v = one(t.half_val);
      return v === undefined ? undefined : halfToNumber(v);
    }
  }
  return undefined;
}

export const tensorboardReader: CurveReader = {
  format: 'tensorboard',
  description: 'TensorBoard event files (events.out.tfevents.*): scalar summaries, written by torch SummaryWriter, tensorboardX or tf.summary',
  matches(file) {
    return path.basename(file).startsWith('events.out.tfevents.');
  },
  async *read(file, { startOffset, onChunk }): AsyncGenerator<CurveItem> {
    for (const r of readTfRecords(file, startOffset, onChunk)) {
      const at = { offset: r.offset, endOffset: r.endOffset };
      if ('corrupt' in r) {
        yield { bad: r.corrupt, at };
        continue;
      }
      let ev: EventValue;
      try {
        ev = EventType.toObject(EventType.decode(r.data), { oneofs: true }) as EventValue;
      } catch (err) {
        yield { bad: `not an Event protobuf (${(err as Error).message})`, at };
        continue;
      }
      const values = ev.summary?.value;
      if (!values?.length) continue;
      const step = ev.step === undefined ? 0 : asNumber(ev.step);
      const wallTime = typeof ev.wall_time === 'number' ? ev.wall_time : null;
      const points: CurvePoint[] = [];
      for (const v of values) {
        if (!v.tag) continue;
        const value = v.value === 'simple_value' ? v.simple_value : v.tensor ? scalarOfTensor(v.tensor) : undefined;
        // Histograms, images, text and non-scalar tensors are not curves.
        if (typeof value === 'number') points.push({ step, metric: v.tag, value, wallTime });
      }
      if (points.length) yield { points, at };
    }
  },
};
