// The spool replicas this member hosts, by spool name, and their lifecycle: a replica is
// starting (its group opening), running (in the map), or stopping (closing, then its storage and
// payloads dropped). At most one of the three holds a spool at a time, so an incarnation never
// opens over the files of one still closing. The registry converges on the metadata's placement
// (`reconcile`); what a replica needs to open, and what happens once it runs, the member wires in
// through RegistryHost, so this file knows nothing of storage, transport or Raft.

import { type PlacedSpool, hostsReplica } from './meta-state.js';
import { parseSpoolGroup, spoolGroup } from './spool-replica.js';

/** What the registry needs of a replica (SpoolReplica; a fake in tests). */
export interface RegisteredReplica {
  /** The spool's Raft group (spoolGroup(name, gen)). */
  readonly group: string;
  /** The incarnation of the spool's name this replica belongs to. */
  readonly gen: number;
  /** Stops the replica's group; resolves once it is closed. */
  close(): Promise<void>;
}

/** What the registry needs of its member. */
export interface RegistryHost<R extends RegisteredReplica> {
  /** This member's id (placement records name it). */
  readonly id: string;
  /** The member is closing: nothing starts, and a replica that opens meanwhile is closed. */
  isClosing(): boolean;
  /**
   * Opens incarnation `gen` of `spool`; `bootstrap`, when given, founds a new group with that
   * replica set. Rejects with what storage or the group's start threw.
   */
  open(spool: string, gen: number, bootstrap: readonly string[] | undefined): Promise<R>;
  /** Drops the storage and payloads of group `group` (its replica closed, or a stale one). */
  drop(group: string): Promise<void>;
  /** `replica` of `spool` opened and is registered (not called once the member is closing). */
  onOpened(spool: string, replica: R): void;
  /** The stopped replica of `spool` is closed and dropped (or failed to): reconcile again. */
  onDropped(spool: string): void;
  /** An open or a drop failed (readiness reports the last one). */
  onError(error: Error): void;
}

export class ReplicaRegistry<R extends RegisteredReplica> {
  private readonly running = new Map<string, R>();
  private readonly starting = new Map<string, Promise<void>>();
  /** Replicas of deleted or moved spools being closed and dropped from storage. */
  private readonly stopping = new Map<string, Promise<void>>();
  /** The groups are paused (a storage recovery): nothing starts until `resume`. */
  private paused = false;

  constructor(private readonly host: RegistryHost<R>) {}

  /** The running replica of `spool`, if any. */
  get(spool: string): R | undefined {
    return this.running.get(spool);
  }

  /** The running replica of spool group `group` (that incarnation exactly), if any. */
  ofGroup(group: string): R | undefined {
    const parsed = parseSpoolGroup(group);
    const replica = parsed === null ? undefined : this.running.get(parsed.name);
    return replica?.group === group ? replica : undefined;
  }

  /** The running replicas by spool (a live view: do not keep it across turns). */
  all(): ReadonlyMap<string, R> {
    return this.running;
  }

  /**
   * Starts incarnation `gen` of `spool` unless a replica of it is running, starting or stopping
   * (a stopping one is reconciled again once dropped), or the registry is paused or closing.
   */
  start(spool: string, gen: number, bootstrap: readonly string[] | undefined): void {
    if (this.host.isClosing() || this.paused) return;
    if (this.running.has(spool) || this.starting.has(spool) || this.stopping.has(spool)) return;
    const start = this.host.open(spool, gen, bootstrap).then(
      async (replica) => {
        this.starting.delete(spool);
        if (this.host.isClosing()) {
          await replica.close();
          return;
        }
        this.running.set(spool, replica);
        this.host.onOpened(spool, replica);
      },
      (error: unknown) => {
        this.starting.delete(spool);
        this.host.onError(asError(error));
      },
    );
    this.starting.set(spool, start);
  }

  /** The spool was deleted, recreated or moved away: stops its replica and drops its storage. */
  stop(spool: string): void {
    const replica = this.running.get(spool);
    if (replica === undefined) return;
    this.running.delete(spool);
    const stop = replica
      .close()
      .then(() => this.host.drop(replica.group))
      .catch((error: unknown) => this.host.onError(asError(error)))
      .then(() => {
        this.stopping.delete(spool);
        this.host.onDropped(spool);
      });
    this.stopping.set(spool, stop);
  }

  /**
   * Starts the replicas `placed` puts on this member (a running earlier incarnation is stopped
   * first) and, when `caughtUp()` (this member's metadata is as current as the group's), stops
   * the replicas of spools placed elsewhere now. Metadata replaying old entries may describe the
   * past: a replica it does not place here is then no reason to drop the replica's storage.
   */
  reconcile(placed: ReadonlyMap<string, PlacedSpool>, caughtUp: () => boolean): void {
    for (const record of placed.values()) {
      if (!hostsReplica(record, this.host.id)) continue;
      const running = this.running.get(record.name);
      if (running !== undefined && running.gen < record.gen) {
        this.stop(record.name); // an earlier incarnation: reconciled again once stopped
      } else {
        // A replica joining by a move starts empty and waits for the spool's leader to add it
        // (as a learner); only the members of the replica set found a new group.
        const founders = record.replicas.includes(this.host.id) ? record.replicas : undefined;
        this.start(record.name, record.gen, founders);
      }
    }
    if (this.running.size === 0 || !caughtUp()) return;
    for (const [name, replica] of this.running) {
      const record = placed.get(name);
      if (record?.gen === replica.gen && !hostsReplica(record, this.host.id)) this.stop(name);
    }
  }

  /**
   * Starts the spool groups found in storage (`stored`: every group name it holds), the latest
   * incarnation of each name; earlier ones (a deletion interrupted by a crash) are dropped
   * first. Rejects with what dropping throws.
   */
  async startStored(stored: readonly string[]): Promise<void> {
    const latest = new Map<string, number>();
    const stale: string[] = [];
    for (const group of stored) {
      const parsed = parseSpoolGroup(group);
      if (parsed === null) continue;
      const other = latest.get(parsed.name);
      if (other !== undefined) stale.push(spoolGroup(parsed.name, Math.min(other, parsed.gen)));
      latest.set(parsed.name, Math.max(other ?? 0, parsed.gen));
    }
    for (const group of stale) await this.host.drop(group);
    for (const [name, gen] of latest) this.start(name, gen, undefined);
  }

  /**
   * Closes every replica once the starts and stops under way are done, and starts none until
   * `resume` (a storage recovery reopens the storage meanwhile).
   */
  async pause(): Promise<void> {
    this.paused = true;
    await this.settled();
    const replicas = [...this.running.values()];
    this.running.clear();
    await Promise.all(replicas.map((replica) => replica.close()));
  }

  /** Lets replicas start again after `pause`. */
  resume(): void {
    this.paused = false;
  }

  /** Closes every replica once the starts and stops under way are done (the member closing). */
  async close(): Promise<void> {
    await this.settled();
    await Promise.all([...this.running.values()].map((replica) => replica.close()));
    this.running.clear();
  }

  /** Resolves once the starts and stops under way are done (each settles, never rejects). */
  private async settled(): Promise<void> {
    await Promise.all([...this.starting.values(), ...this.stopping.values()]);
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
