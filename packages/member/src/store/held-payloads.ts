// After a snapshot is restored, the messages whose payload location means nothing here (the
// snapshot is another replica's, or was saved before its payloads were fetched) are looked up
// by seq in this replica's own store before anything is fetched from peers: a member whose log
// was dropped for bad bytes and that was sent a snapshot usually still holds every payload in
// its segment files. Fetching them instead would leave the group with one good copy for as long
// as the fetch takes (the chaos finding of issue 14, seed 20261126).

import { PAYLOAD_MISSING, type SpoolEngine } from '@spoolmq/engine';
import type { ReplicaPayloadStore } from './replica-payloads.js';

/**
 * Gives every message of `engine` that lacks its payload the copy `store` still holds, if one
 * is intact (ReplicaPayloadStore.recoverHeld); returns how many. The seq index lives only for
 * this call: two map entries per missing message.
 */
export function recoverHeldPayloads(engine: SpoolEngine, store: ReplicaPayloadStore): number {
  if (engine.missingPayloadCount === 0) return 0;
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
    return queueGen !== undefined && engine.fillPayload(queueGen, seq, payload);
  });
}
