// After a snapshot is restored, the messages whose payload location means nothing here (the
// snapshot is another replica's, or was saved before its payloads were fetched) are looked up
// by seq in this replica's own store before anything is fetched from peers: a member whose log
// was dropped for bad bytes and that was sent a snapshot usually still holds every payload in
// its segment files. Fetching them instead would leave the group with one good copy for as long
// as the fetch takes (the chaos finding of issue 14, seed 20261126).

import { PAYLOAD_MISSING, type SpoolEngine } from '@spoolmq/engine';
import type { HeldScan, ReplicaPayloadStore } from './replica-payloads.js';

/**
 * Bytes of the store one step of the scan reads at most (beside one larger record): a few ms of
 * reads and checksums from the page cache, so the replica runs it a step per event-loop turn
 * without holding the loop (a whole scan of a 2 GiB store held it for seconds: issue 13).
 */
export const HELD_SCAN_STEP_BYTES = 4 * 1024 * 1024;

/**
 * Gives every message of `engine` that lacks its payload the copy `store` still holds, if one
 * is intact (ReplicaPayloadStore.recoverHeld), a bounded step at a time. The seq index lives as
 * long as the recovery: two map entries per missing message.
 */
export class HeldPayloadRecovery {
  /** Payloads taken so far. */
  taken = 0;
  private readonly scan: HeldScan | null;
  /** Queues given payloads in the current step. */
  private readonly touched = new Set<number>();

  /** `filled` is told of each queue a step gave payloads to, once per step. */
  constructor(
    engine: SpoolEngine,
    store: ReplicaPayloadStore,
    private readonly filled: (queueGen: number) => void = () => {},
  ) {
    this.scan = engine.missingPayloadCount === 0 ? null : this.begin(engine, store);
  }

  /** Runs the next step (HELD_SCAN_STEP_BYTES by default); true once the recovery is done. */
  step(bytesMax = HELD_SCAN_STEP_BYTES): boolean {
    if (this.scan === null) return true;
    this.touched.clear();
    const done = this.scan.step(bytesMax);
    for (const queueGen of this.touched) this.filled(queueGen);
    return done;
  }

  private begin(engine: SpoolEngine, store: ReplicaPayloadStore): HeldScan {
    const lengths = new Map<number, number>();
    const gens = new Map<number, number>();
    engine.walkMessages({ queueGen: 0, seq: 0 }, (queue, message) => {
      if (message.location === PAYLOAD_MISSING) {
        lengths.set(message.seq, message.byteLength);
        gens.set(message.seq, queue.gen);
      }
      return true;
    });
    return store.recoverHeld(lengths, (seq, payload) => {
      const queueGen = gens.get(seq);
      // The message may be gone by now (a step runs after later entries were applied).
      if (queueGen === undefined || !engine.fillPayload(queueGen, seq, payload)) return false;
      this.taken++;
      this.touched.add(queueGen);
      return true;
    });
  }
}

/** The whole recovery at once (HeldPayloadRecovery run to its end); returns how many. */
export function recoverHeldPayloads(engine: SpoolEngine, store: ReplicaPayloadStore): number {
  const recovery = new HeldPayloadRecovery(engine, store);
  while (!recovery.step());
  return recovery.taken;
}
