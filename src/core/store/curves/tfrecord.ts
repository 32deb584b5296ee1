import { closeSync, openSync, readSync } from 'node:fs';

/**
 * TFRecord framing, as TensorFlow's `RecordWriter` (tensorflow/core/lib/io/record_writer.cc)
 * writes every record of a TensorBoard event file:
 *
 *   uint64 length (little endian) · uint32 masked CRC-32C of those 8 bytes
 *   data[length]                  · uint32 masked CRC-32C of the data
 *
 * where mask(crc) = ((crc >>> 15) | (crc << 17)) + 0xa282ead8.
 */
const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

/** CRC-32C (Castagnoli), as iSCSI and TFRecord use it. */
export function crc32c(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export function maskedCrc32c(bytes: Uint8Array): number {
  const c = crc32c(bytes);
  return ((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0;
}

/** One record framed as RecordWriter writes it. */
export function frameRecord(data: Uint8Array): Buffer {
  const head = Buffer.alloc(12);
  head.writeBigUInt64LE(BigInt(data.length), 0);
  head.writeUInt32LE(maskedCrc32c(head.subarray(0, 8)), 8);
  const tail = Buffer.alloc(4);
  tail.writeUInt32LE(maskedCrc32c(data), 0);
  return Buffer.concat([head, data, tail]);
}

export type TfRecordItem = { data: Buffer; offset: number; endOffset: number } | { corrupt: string; offset: number; endOffset: number };

/** A record larger than this is taken for a corrupt length (event files hold small records). */
const MAX_RECORD = 256 * 1024 * 1024;

/**
 * The records of a TFRecord file from `startOffset`, each checked against its CRCs. A
 * record whose data CRC fails is reported and skipped (its length was sound, so the next
 * record is found); a length whose CRC fails leaves no way to find the next record, so
 * reading stops there with a report. A last record not yet written in full is left for
 * the next read.
 */
export function* readTfRecords(file: string, startOffset: number, onChunk?: (bytes: Buffer) => void): Generator<TfRecordItem> {
  const fd = openSync(file, 'r');
  // A window on the file, read a block at a time: event files hold many small records.
  let buf = Buffer.alloc(0);
  let bufStart = startOffset;
  /** The `n` bytes at `offset`, or null when the file does not hold them (yet). */
  const bytes = (offset: number, n: number): Buffer | null => {
    if (offset + n > bufStart + buf.length) {
      const keep = buf.subarray(offset - bufStart);
      const block = Buffer.alloc(Math.max(n, 1 << 20));
      const got = readSync(fd, block, 0, block.length, bufStart + buf.length);
      buf = Buffer.concat([keep, block.subarray(0, got)]);
      bufStart = offset;
      if (n > buf.length) return null;
    }
    return buf.subarray(offset - bufStart, offset - bufStart + n);
  };
  try {
    let offset = startOffset;
    for (;;) {
      const head = bytes(offset, 12);
      if (!head) return;
      const length = head.readBigUInt64LE(0);
      if (head.readUInt32LE(8) !== maskedCrc32c(head.subarray(0, 8)) || length > BigInt(MAX_RECORD)) {
        yield { corrupt: 'the record length fails its CRC-32C check: the file is damaged from here on; the records before this offset were read', offset, endOffset: offset };
        return;
      }
      const n = Number(length);
      const record = bytes(offset, 12 + n + 4);
      if (!record) return;
      const data = record.subarray(12, 12 + n);
      const end = offset + 12 + n + 4;
      onChunk?.(record);
      if (record.readUInt32LE(12 + n) !== maskedCrc32c(data)) yield { corrupt: 'the record data fails its CRC-32C check; the record was skipped', offset, endOffset: end };
      else yield { data, offset, endOffset: end };
      offset = end;
    }
  } finally {
    closeSync(fd);
  }
}
