// The simulator's scheduler: a binary min-heap of callbacks keyed by simulated time, ties broken
// by insertion order so that a run is a pure function of its seed.

interface Scheduled {
  readonly time: number;
  readonly seq: number;
  readonly run: () => void;
}

export class EventQueue {
  private heap: Scheduled[] = [];
  private seq = 0;
  private nowValue = 0;

  now(): number {
    return this.nowValue;
  }

  size(): number {
    return this.heap.length;
  }

  /** Runs `run` at `now() + delay` (delay >= 0). */
  after(delay: number, run: () => void): void {
    this.push({ time: this.nowValue + Math.max(0, delay), seq: this.seq++, run });
  }

  /** Runs `run` at absolute time `time` (not before now). */
  at(time: number, run: () => void): void {
    this.push({ time: Math.max(time, this.nowValue), seq: this.seq++, run });
  }

  /** Runs the earliest event; returns false when none is left. */
  step(): boolean {
    const top = this.pop();
    if (top === undefined) return false;
    this.nowValue = top.time;
    top.run();
    return true;
  }

  private push(item: Scheduled): void {
    const heap = this.heap;
    heap.push(item);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private pop(): Scheduled | undefined {
    const heap = this.heap;
    if (heap.length === 0) return undefined;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  }
}

function before(a: Scheduled, b: Scheduled): boolean {
  return a.time < b.time || (a.time === b.time && a.seq < b.seq);
}
