// Where a replica keeps message payloads: the engine holds only a payload's location and length
// (message.ts), the store holds the bytes. The in-memory store (memory-payloads.ts) serves the
// local variant and the tests; the member's segment store keeps them on disk with a checksum per
// record. Locations are replica-local: they never enter a command and never decide a result, so
// replicas with different stores still reach the same replicated state.

import { MqError } from './errors.js';

/** The location of a payload this replica does not hold yet (a snapshot from another replica). */
export const PAYLOAD_MISSING = -1;

export interface PayloadStore {
  /**
   * Identity of the store (random at creation): a snapshot names the store its locations point
   * into, so a replica restoring another replica's snapshot knows it must fetch the payloads.
   */
  readonly id: string;
  /**
   * Keeps the payload of message `seq` and returns its location (>= 0). The bytes need not be
   * durable yet (the log holds them until `sync`). Throws on an I/O failure (the replica stops).
   */
  append(seq: number, payload: Uint8Array): number;
  /**
   * The payload of message `seq` at `location`, `byteLength` bytes. Throws PayloadError when
   * the bytes are missing or fail their checksum.
   */
  read(seq: number, location: number, byteLength: number): Uint8Array;
  /** A location the state referenced at restore (counts it live for space reclaim). */
  adopt(location: number, byteLength: number): void;
  /** The state no longer references `location`: its space may be reclaimed. */
  release(location: number, byteLength: number): void;
  /**
   * Optional: a predicate naming locations worth moving (their segment is mostly dead), or null
   * when nothing is worth it now. See SpoolEngine.relocatePayloads.
   */
  compactionTarget?(): ((location: number) => boolean) | null;
}

/**
 * A payload that cannot be read (missing, or failing its checksum): 503 `unavailable` until a
 * good copy is fetched from another replica. Nothing stored is changed by the failure.
 */
export class PayloadError extends MqError {
  constructor(seq: number, reason: string) {
    super('unavailable', `payload of message ${seq} is unavailable here: ${reason}; retry`);
  }
}
