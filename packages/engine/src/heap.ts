// Binary min-heap of (key, item, stamp) triples in three parallel arrays: no object per entry.
// Ties on the key are broken by the item's seq, so equal keys pop in send order. Entries are
// deleted lazily: the owner validates the top with the stamp and pops stale entries, and calls
// `retain` to compact when stale entries outnumber live ones.

export interface Sequenced {
  readonly seq: number;
}

export class MinHeap<T extends Sequenced> {
  private readonly keys: number[] = [];
  private readonly items: T[] = [];
  private readonly stamps: number[] = [];

  get size(): number {
    return this.items.length;
  }

  /** Adds an entry. O(log n); O(1) when keys arrive in ascending order. */
  push(key: number, item: T, stamp: number): void {
    this.keys.push(key);
    this.items.push(item);
    this.stamps.push(stamp);
    this.siftUp(this.items.length - 1);
  }

  /** Key of the top entry; only valid when size > 0. */
  topKey(): number {
    return this.keys[0]!;
  }

  /** Item of the top entry, undefined when empty. */
  topItem(): T | undefined {
    return this.items[0];
  }

  topStamp(): number {
    return this.stamps[0]!;
  }

  /** Removes the top entry. No-op when empty. */
  pop(): void {
    const last = this.items.length - 1;
    if (last < 0) return;
    if (last > 0) this.move(last, 0);
    this.keys.pop();
    this.items.pop();
    this.stamps.pop();
    if (last > 0) this.siftDown(0);
  }

  clear(): void {
    this.keys.length = 0;
    this.items.length = 0;
    this.stamps.length = 0;
  }

  /** Keeps the entries `keep` accepts and restores the heap order. O(n). */
  retain(keep: (key: number, item: T, stamp: number) => boolean): void {
    let kept = 0;
    for (let i = 0; i < this.items.length; i++) {
      if (keep(this.keys[i]!, this.items[i]!, this.stamps[i]!)) {
        if (kept !== i) this.move(i, kept);
        kept++;
      }
    }
    this.keys.length = kept;
    this.items.length = kept;
    this.stamps.length = kept;
    for (let i = (kept >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  private less(a: number, b: number): boolean {
    const ka = this.keys[a]!;
    const kb = this.keys[b]!;
    return ka < kb || (ka === kb && this.items[a]!.seq < this.items[b]!.seq);
  }

  private move(from: number, to: number): void {
    this.keys[to] = this.keys[from]!;
    this.items[to] = this.items[from]!;
    this.stamps[to] = this.stamps[from]!;
  }

  private swap(a: number, b: number): void {
    const key = this.keys[a]!;
    const item = this.items[a]!;
    const stamp = this.stamps[a]!;
    this.move(b, a);
    this.keys[b] = key;
    this.items[b] = item;
    this.stamps[b] = stamp;
  }

  private siftUp(index: number): void {
    let i = index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(index: number): void {
    const n = this.items.length;
    let i = index;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) return;
      const right = left + 1;
      const child = right < n && this.less(right, left) ? right : left;
      if (!this.less(child, i)) return;
      this.swap(i, child);
      i = child;
    }
  }
}
