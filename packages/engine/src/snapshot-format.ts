// Snapshot of a spool's replicated state: a versioned binary format. Only replicated state is
// encoded: a leased message is encoded as what it is in the log (visible), counters and other
// primary-local state are left out, so two replicas that applied the same log produce identical
// bytes. Layout (big-endian):
//   magic "MQSN" | u16 version | plan (version 2 on: 7 x f64, see writePlan) |
//   f64 planVersion (version 3 on) | ascii payload store id (version 4 on) |
//   f64 lastAppliedAtMs | f64 nextSeq | u32 nextQueueGen |
//   u32 queueCount | queues in name order | u32 END
//   queue: ascii name | u32 gen | f64 createdAtMs | u8 state | settings |
//          u32 dedupCount | (16B key, f64 seq, f64 expiresAtMs)* |
//          u32 messageCount | (f64 seq, f64 createdAtMs, f64 visibleAtMs, f64 retentionStartMs,
//                              u32 retries, u32 gen, u8 flags, u32 length, payload)*
//   version 4 on, a message ends with u32 length, f64 location instead of the payload: a snapshot
//   holds metadata only, and the locations are valid in the payload store it names (the replica
//   that wrote it); any other replica fetches the payloads (see spool-replica.ts).

import type { QueueState } from './service.js';

export const MAGIC = 0x4d51534e; // "MQSN"
/**
 * Version 4 holds payload locations instead of payloads; version 3 carries the plan and its
 * version; version 2 the plan only (version 0); version 1 neither (the caller's plan). Versions
 * 1-3 are read by moving their payloads into the payload store (a migration on restore).
 */
export const SNAPSHOT_VERSION = 4;
export const SNAPSHOT_VERSION_PAYLOADS = 3;
export const SNAPSHOT_VERSION_PLAN = 2;
export const SNAPSHOT_VERSION_NO_PLAN = 1;
export const END = 0x454e4421; // "END!"
export const FLAG_FAILED = 1;
export const QUEUE_STATES: readonly QueueState[] = ['active', 'draining', 'deleting'];
/** Bytes of a message record (version 4: no payload). */
export const MESSAGE_RECORD_BYTES = 4 * 8 + 4 + 4 + 1 + 4 + 8;
