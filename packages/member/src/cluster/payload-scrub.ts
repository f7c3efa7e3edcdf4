// A background scrub of a spool replica's payload records. A bit that flips in a segment file
// stays latent until the payload is read, and a payload is read only when its message is
// delivered: meanwhile another fault can take the other replicas' copies, and then no good copy
// is left (the chaos finding of issue 14, seed 20261126). The scrub reads every live record from
// the medium (never the cache) and checks its checksum; a bad one loses its location, so its
// message reads `unavailable` and the replica fetches a good copy from a peer at once
// (payload-fetch.ts), while good copies exist.
//
// Pace, on the injected clock: the pass after a start (when a member comes back from a crash or
// an operator's restart, the likeliest time for damage to surface) runs a tick every
// SCRUB_TICK_MS_FIRST; later passes a tick every SCRUB_TICK_MS, after a rest of SCRUB_REST_MS. A
// tick reads at most SCRUB_BYTES_PER_TICK bytes in SCRUB_RECORDS_PER_TICK records, so the reads
// (synchronous, like every payload read) never hold the member for long; and it visits at most
// SCRUB_VISITS_PER_TICK messages, so a walk over a rebuilding replica's messages (most of them
// without a payload here yet, which are not read) is bounded too. The walk keeps a cursor
// (queue generation, seq), as the fetcher does: no per-message state.

import { PAYLOAD_MISSING, type Message, type Queue, type SpoolEngine } from '@spoolmq/engine';
import type { Clock, TimerHandle } from '@spoolmq/protocol';
import type { ReplicaPayloadStore } from '../store/replica-payloads.js';

export const SCRUB_BYTES_PER_TICK = 4 * 1024 * 1024;
export const SCRUB_RECORDS_PER_TICK = 2048;
export const SCRUB_VISITS_PER_TICK = 65_536;
export const SCRUB_TICK_MS_FIRST = 100;
export const SCRUB_TICK_MS = 1000;
export const SCRUB_REST_MS = 10 * 60_000;

/** A record the scrub found bad: its message is unavailable here until a good copy arrives. */
export interface ScrubFinding {
  readonly group: string;
  readonly queue: string;
  readonly seq: number;
  /** Why the record failed (checksum mismatch, short read, ...). */
  readonly problem: string;
}

/** What the scrub needs of its replica. */
export interface ScrubHost {
  readonly group: string;
  readonly clock: Clock;
  /** The current engine (a restore replaces it: the pass starts over). */
  engine(): SpoolEngine;
  readonly store: Pick<ReplicaPayloadStore, 'verify'>;
  closed(): boolean;
  /** Told of each bad record, after its message's location was dropped. */
  found(finding: ScrubFinding): void;
}

export class PayloadScrubber {
  /** Records read and checked, and of those the bad ones. */
  scrubbed = 0;
  bad = 0;
  /** Passes completed over every live record. */
  passes = 0;
  private cursor = { queueGen: 0, seq: 0 };
  private engineOf: SpoolEngine | null = null;
  private timer: TimerHandle | null = null;

  constructor(private readonly host: ScrubHost) {}

  /** Starts the pass after a start (no-op when running). */
  start(): void {
    if (this.timer === null) this.schedule(SCRUB_TICK_MS_FIRST);
  }

  stop(): void {
    if (this.timer !== null) this.host.clock.clearTimer(this.timer);
    this.timer = null;
  }

  /**
   * Checks the next live records, at most a tick's bounds; drops the location of each bad one
   * (engine.dropPayload) and reports it. Returns true when this tick ended a pass.
   */
  tick(): boolean {
    const engine = this.host.engine();
    if (this.engineOf !== engine) {
      this.engineOf = engine;
      this.cursor = { queueGen: 0, seq: 0 };
    }
    const bad: [Queue, Message, string][] = [];
    const ended = this.walk(engine, bad);
    for (const [queue, message, problem] of bad) {
      engine.dropPayload(queue, message);
      this.bad++;
      this.host.found({ group: this.host.group, queue: queue.name, seq: message.seq, problem });
    }
    if (ended) {
      this.passes++;
      this.cursor = { queueGen: 0, seq: 0 };
    }
    return ended;
  }

  /** Verifies records from the cursor on, within the bounds; true when none is left. */
  private walk(engine: SpoolEngine, bad: [Queue, Message, string][]): boolean {
    let bytes = 0;
    let records = 0;
    let visits = 0;
    const full = (): boolean =>
      bytes >= SCRUB_BYTES_PER_TICK ||
      records >= SCRUB_RECORDS_PER_TICK ||
      visits >= SCRUB_VISITS_PER_TICK;
    const walked = engine.walkMessages(this.cursor, (queue, message) => {
      if (full()) return false;
      visits++;
      if (message.location === PAYLOAD_MISSING) return true;
      records++;
      this.scrubbed++;
      bytes += message.byteLength;
      const { seq, location, byteLength } = message;
      const problem = this.host.store.verify(seq, location, byteLength);
      if (problem !== null) bad.push([queue, message, problem]);
      return true;
    });
    // A walk that reached the end just as the bounds filled ends its pass on the next tick.
    return walked && !full();
  }

  private schedule(delayMs: number): void {
    this.timer = this.host.clock.setTimer(() => {
      this.timer = null;
      if (this.host.closed()) return;
      const ended = this.tick();
      const tickMs = this.passes === 0 ? SCRUB_TICK_MS_FIRST : SCRUB_TICK_MS;
      this.schedule(ended ? SCRUB_REST_MS : tickMs);
    }, delayMs);
  }
}
