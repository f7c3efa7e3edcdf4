// Binary form of a command, as it goes into the spool's Raft log: one version byte, one type
// byte, then the fields in a fixed order (big-endian; seqs and times as float64, which holds every
// safe integer exactly). Payloads travel verbatim with a u32 length. No JSON anywhere.

import { ByteReader, ByteWriter, CodecError } from './bytes.js';
import type { Command, CommandType, MessageRef } from './commands.js';
import { DEDUP_KEY_BYTES } from './dedup-table.js';
import type { DeleteMode, SettingsPatch } from './service.js';
import type { Settings } from './settings.js';
import { type Plan, resolvePlan } from './plan.js';

const COMMAND_FORMAT_VERSION = 1;

const TYPE_CODES: Readonly<Record<CommandType, number>> = {
  createQueue: 1,
  updateQueue: 2,
  deleteQueue: 3,
  send: 4,
  ack: 5,
  nack: 6,
  fail: 7,
  discard: 8,
  release: 9,
  recover: 10,
  ackAndSend: 11,
  expire: 12,
  setPlan: 13,
};
const TYPES_BY_CODE: readonly (CommandType | undefined)[] = (() => {
  const out: (CommandType | undefined)[] = [];
  for (const [type, code] of Object.entries(TYPE_CODES)) out[code] = type as CommandType;
  return out;
})();

const PATCH_LEASE = 1;
const PATCH_RETRIES = 2;
const PATCH_DEDUP = 4;
const PATCH_RETENTION = 8;
const PATCH_RATE = 16;
const PATCH_RATE_NONE = 32;

const REF_BYTES = 16;
const SETTINGS_BYTES = 28;
const PATCH_BYTES_MAX = 1 + 16 + 12;
/** A plan: 7 fields as float64. */
const PLAN_BYTES = 7 * 8;

/** Exact encoded size of a command (an upper bound for an update's patch). */
function encodedSize(command: Command): number {
  switch (command.type) {
    case 'createQueue':
      return 2 + 1 + command.name.length + SETTINGS_BYTES;
    case 'updateQueue':
      return 2 + 4 + PATCH_BYTES_MAX;
    case 'deleteQueue':
      return 2 + 5;
    case 'send':
      return 2 + 9 + dedupKeySize(command.dedupKey) + 4 + command.payload.byteLength;
    case 'ack':
    case 'nack':
    case 'fail':
    case 'discard':
      return 2 + REF_BYTES;
    case 'release':
    case 'recover':
      return 2 + REF_BYTES + 4;
    case 'ackAndSend':
      return 2 + REF_BYTES + 9 + dedupKeySize(command.dedupKey) + 4 + command.payload.byteLength;
    case 'expire':
      return 2 + 8 + 12 * command.seqs.length;
    case 'setPlan':
      return 2 + PLAN_BYTES + 8;
  }
}

function dedupKeySize(key: Uint8Array | null): number {
  return key === null ? 0 : DEDUP_KEY_BYTES;
}

/**
 * Encodes a command after `headroomBytes` zero bytes the caller fills (a spool's log entry puts
 * its time there, so a 64 KiB payload is copied once, not twice). The result is a fresh buffer
 * the caller owns; its command starts at `headroomBytes`.
 */
export function encodeCommand(command: Command, headroomBytes = 0): Uint8Array {
  const writer = new ByteWriter(headroomBytes + encodedSize(command));
  writer.skip(headroomBytes);
  writer.u8(COMMAND_FORMAT_VERSION);
  writer.u8(TYPE_CODES[command.type]);
  switch (command.type) {
    case 'createQueue':
      writer.ascii(command.name);
      writeSettings(writer, command.settings);
      break;
    case 'updateQueue':
      writer.u32(command.queueGen);
      writePatch(writer, command.change);
      break;
    case 'deleteQueue':
      writer.u32(command.queueGen);
      writer.u8(command.mode === 'force' ? 0 : 1);
      break;
    case 'send':
      writer.u32(command.queueGen);
      writer.u32(command.delayMs);
      writeDedupKey(writer, command.dedupKey);
      writer.bytes(command.payload);
      break;
    case 'ack':
    case 'nack':
    case 'fail':
    case 'discard':
      writeRef(writer, command);
      break;
    case 'release':
    case 'recover':
      writeRef(writer, command);
      writer.u32(command.delayMs);
      break;
    case 'ackAndSend':
      writeRef(writer, command);
      writer.u32(command.targetGen);
      writer.u32(command.delayMs);
      writeDedupKey(writer, command.dedupKey);
      writer.bytes(command.payload);
      break;
    case 'expire':
      writer.u32(command.queueGen);
      writer.u32(command.seqs.length);
      for (let i = 0; i < command.seqs.length; i++) {
        writer.f64(command.seqs[i]!);
        writer.u32(command.gens[i]!);
      }
      break;
    case 'setPlan':
      writePlan(writer, command.plan);
      writer.f64(command.version);
      break;
  }
  return writer.finish();
}

/**
 * Decodes a command. Payloads and dedup keys are views of `bytes` (no copy): the caller must not
 * modify `bytes` afterwards. Throws `CodecError` on malformed input.
 */
export function decodeCommand(bytes: Uint8Array): Command {
  const reader = new ByteReader(bytes);
  const version = reader.u8();
  if (version !== COMMAND_FORMAT_VERSION) throw new CodecError(`unknown command format ${version}`);
  const type = TYPES_BY_CODE[reader.u8()];
  if (type === undefined) throw new CodecError('unknown command type');
  const command = decodeBody(reader, type);
  reader.end();
  return command;
}

function decodeBody(reader: ByteReader, type: CommandType): Command {
  // Object literals with a fixed field order (no spreads) keep decoded commands monomorphic.
  switch (type) {
    case 'createQueue':
      return { type, name: reader.ascii(), settings: readSettings(reader) };
    case 'updateQueue':
      return { type, queueGen: reader.u32(), change: readPatch(reader) };
    case 'deleteQueue':
      return { type, queueGen: reader.u32(), mode: readMode(reader) };
    case 'send':
      return {
        type,
        queueGen: reader.u32(),
        delayMs: reader.u32(),
        dedupKey: readDedupKey(reader),
        payload: reader.bytes(),
      };
    case 'ack':
    case 'nack':
    case 'fail':
    case 'discard':
      return { type, queueGen: reader.u32(), seq: reader.safeInt(), gen: reader.u32() };
    case 'release':
    case 'recover':
      return {
        type,
        queueGen: reader.u32(),
        seq: reader.safeInt(),
        gen: reader.u32(),
        delayMs: reader.u32(),
      };
    case 'ackAndSend':
      return {
        type,
        queueGen: reader.u32(),
        seq: reader.safeInt(),
        gen: reader.u32(),
        targetGen: reader.u32(),
        delayMs: reader.u32(),
        dedupKey: readDedupKey(reader),
        payload: reader.bytes(),
      };
    case 'expire': {
      const queueGen = reader.u32();
      const count = reader.u32();
      if (count * 12 > reader.remaining) throw new CodecError('expire count exceeds input');
      const seqs: number[] = [];
      const gens: number[] = [];
      for (let i = 0; i < count; i++) {
        seqs.push(reader.safeInt());
        gens.push(reader.u32());
      }
      return { type, queueGen, seqs, gens };
    }
    case 'setPlan':
      return { type, plan: readPlan(reader), version: reader.safeInt() };
  }
}

/** A plan in a fixed layout (shared with the snapshot format). */
export function writePlan(writer: ByteWriter, plan: Plan): void {
  writer.f64(plan.queuesPerSpoolMax);
  writer.f64(plan.retentionLimitSeconds);
  writer.f64(plan.retentionDefaultSeconds);
  writer.f64(plan.messagesPerSpoolMax);
  writer.f64(plan.payloadBytesPerSpoolMax);
  writer.f64(plan.messageSizeMaxBytes);
  writer.f64(plan.dedupKeysPerSpoolMax);
}

/** Reads `writePlan` bytes. Throws CodecError for a plan `resolvePlan` refuses. */
export function readPlan(reader: ByteReader): Plan {
  const fields = {
    queuesPerSpoolMax: reader.f64(),
    retentionLimitSeconds: reader.f64(),
    retentionDefaultSeconds: reader.f64(),
    messagesPerSpoolMax: reader.f64(),
    payloadBytesPerSpoolMax: reader.f64(),
    messageSizeMaxBytes: reader.f64(),
    dedupKeysPerSpoolMax: reader.f64(),
  };
  try {
    return resolvePlan(fields);
  } catch (error) {
    throw new CodecError(error instanceof Error ? error.message : 'bad plan');
  }
}

function writeRef(writer: ByteWriter, ref: MessageRef): void {
  writer.u32(ref.queueGen);
  writer.f64(ref.seq);
  writer.u32(ref.gen);
}

function readMode(reader: ByteReader): DeleteMode {
  const code = reader.u8();
  if (code > 1) throw new CodecError('unknown delete mode');
  return code === 0 ? 'force' : 'drain';
}

function writeDedupKey(writer: ByteWriter, key: Uint8Array | null): void {
  if (key === null) {
    writer.u8(0);
    return;
  }
  if (key.byteLength !== DEDUP_KEY_BYTES) throw new CodecError('dedup key must be 16 bytes');
  writer.u8(1);
  writer.raw(key);
}

function readDedupKey(reader: ByteReader): Uint8Array | null {
  const present = reader.u8();
  if (present > 1) throw new CodecError('bad dedup key flag');
  return present === 1 ? reader.raw(DEDUP_KEY_BYTES) : null;
}

/** Settings in a fixed layout (shared with the snapshot format). */
export function writeSettings(writer: ByteWriter, settings: Settings): void {
  writer.u32(settings.leaseTimeoutSeconds);
  writer.u32(settings.maxRetries);
  writer.u32(settings.dedupWindowSeconds);
  writer.u32(settings.retentionSeconds);
  writer.f64(settings.rateIntervalMicros);
  writer.u32(settings.rateBurst);
}

export function readSettings(reader: ByteReader): Settings {
  return {
    leaseTimeoutSeconds: reader.u32(),
    maxRetries: reader.u32(),
    dedupWindowSeconds: reader.u32(),
    retentionSeconds: reader.u32(),
    rateIntervalMicros: reader.safeInt(),
    rateBurst: reader.u32(),
  };
}

function writePatch(writer: ByteWriter, patch: SettingsPatch): void {
  let mask = 0;
  if (patch.leaseTimeoutSeconds !== undefined) mask |= PATCH_LEASE;
  if (patch.maxRetries !== undefined) mask |= PATCH_RETRIES;
  if (patch.dedupWindowSeconds !== undefined) mask |= PATCH_DEDUP;
  if (patch.retentionSeconds !== undefined) mask |= PATCH_RETENTION;
  if (patch.recvRateLimit === null) mask |= PATCH_RATE_NONE;
  else if (patch.recvRateLimit !== undefined) mask |= PATCH_RATE;
  writer.u8(mask);
  if (patch.leaseTimeoutSeconds !== undefined) writer.u32(patch.leaseTimeoutSeconds);
  if (patch.maxRetries !== undefined) writer.u32(patch.maxRetries);
  if (patch.dedupWindowSeconds !== undefined) writer.u32(patch.dedupWindowSeconds);
  if (patch.retentionSeconds !== undefined) writer.u32(patch.retentionSeconds);
  if (patch.recvRateLimit) {
    writer.f64(patch.recvRateLimit.intervalMicros);
    writer.u32(patch.recvRateLimit.burst);
  }
}

function readPatch(reader: ByteReader): SettingsPatch {
  const mask = reader.u8();
  if (mask >= 64 || (mask & PATCH_RATE && mask & PATCH_RATE_NONE)) {
    throw new CodecError('bad settings patch');
  }
  const patch: {
    leaseTimeoutSeconds?: number;
    maxRetries?: number;
    dedupWindowSeconds?: number;
    retentionSeconds?: number;
    recvRateLimit?: { intervalMicros: number; burst: number } | null;
  } = {};
  if (mask & PATCH_LEASE) patch.leaseTimeoutSeconds = reader.u32();
  if (mask & PATCH_RETRIES) patch.maxRetries = reader.u32();
  if (mask & PATCH_DEDUP) patch.dedupWindowSeconds = reader.u32();
  if (mask & PATCH_RETENTION) patch.retentionSeconds = reader.u32();
  if (mask & PATCH_RATE_NONE) patch.recvRateLimit = null;
  if (mask & PATCH_RATE) {
    patch.recvRateLimit = { intervalMicros: reader.safeInt(), burst: reader.u32() };
  }
  return patch;
}
