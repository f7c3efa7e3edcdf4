// The simulated network: every message is delivered after a random delay (so messages reorder),
// may be lost or duplicated, and is dropped when its link is cut (partitions are sets of cut
// links, so they can be asymmetric).

import type { Message, NodeId } from '../../src/types.js';
import type { EventQueue } from './event-queue.js';
import type { Prng } from '../../src/prng.js';

export interface NetworkFaults {
  dropRate: number;
  duplicateRate: number;
  delayMinMs: number;
  delayMaxMs: number;
}

export const CALM: NetworkFaults = { dropRate: 0, duplicateRate: 0, delayMinMs: 1, delayMaxMs: 3 };

export class SimNetwork {
  faults: NetworkFaults = CALM;
  private readonly cut = new Set<string>();
  sent = 0;
  dropped = 0;

  constructor(
    private readonly queue: EventQueue,
    private readonly prng: Prng,
    private readonly deliver: (m: Message) => void,
  ) {}

  send(m: Message): void {
    this.sent += 1;
    if (this.cut.has(`${m.from}>${m.to}`) || this.prng.chance(this.faults.dropRate)) {
      this.dropped += 1;
      return;
    }
    const copies = this.prng.chance(this.faults.duplicateRate) ? 2 : 1;
    for (let i = 0; i < copies; i += 1) {
      const { delayMinMs, delayMaxMs } = this.faults;
      const delay = delayMinMs + this.prng.next() * (delayMaxMs - delayMinMs);
      this.queue.after(delay, () => this.deliver(m));
    }
  }

  cutLink(from: NodeId, to: NodeId): void {
    this.cut.add(`${from}>${to}`);
  }

  /** Splits `ids` into `side` and the rest, cutting every link between the two groups. */
  partition(side: readonly NodeId[], ids: readonly NodeId[]): void {
    for (const a of side) {
      for (const b of ids) {
        if (side.includes(b)) continue;
        this.cutLink(a, b);
        this.cutLink(b, a);
      }
    }
  }

  heal(): void {
    this.cut.clear();
  }

  cutCount(): number {
    return this.cut.size;
  }
}
