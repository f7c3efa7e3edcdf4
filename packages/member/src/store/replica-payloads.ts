// What a spool replica needs of its payload store beyond what the engine uses: checkpoints that
// tie space reclaim to saved snapshots, a sync before a snapshot is saved, and the clean-up after
// a restore. The segment store implements it on disk; the memory variant serves members whose
// Raft storage is in memory (tests).

import { MemoryPayloadStore, type PayloadStore } from '@spoolmq/engine';

export interface ReplicaPayloadStore extends PayloadStore {
  /**
   * Marks the state as it is now, for a snapshot of it; returns the checkpoint number (ever
   * increasing). Space released before it is reclaimed once that snapshot is saved.
   */
  checkpoint(): number;
  /** The snapshot of `checkpoint` is saved durably: what no saved snapshot needs may go. */
  saved(checkpoint: number): void;
  /** The state was replaced by another replica's snapshot: nothing held is referenced now. */
  retireAll(): void;
  /** At start, after the saved snapshot was restored: drops what it does not reference. */
  sweep(): void;
  /** Makes every appended payload durable. Rejects on an I/O failure. */
  sync(): Promise<void>;
  close(): Promise<void>;
  /** Removes everything stored (the replica left the spool). */
  destroy(): Promise<void>;
}

/** The in-memory replica store: payloads by seq, nothing to sync or reclaim by segment. */
export class MemoryReplicaPayloads extends MemoryPayloadStore implements ReplicaPayloadStore {
  private checkpoints = 0;

  checkpoint(): number {
    return ++this.checkpoints;
  }

  saved(): void {}

  retireAll(): void {
    this.clear();
  }

  sweep(): void {}

  async sync(): Promise<void> {}

  async close(): Promise<void> {}

  async destroy(): Promise<void> {
    this.clear();
  }
}
