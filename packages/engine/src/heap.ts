// Binary min-heap of (key, seq, stamp) triples in three parallel number arrays: no object per
// entry, and no reference to a message (messages live in their queue's columns, send-order.ts;
// the owner finds an entry's message by seq). Ties on the key are broken by the seq, so equal
// keys pop in send order. Entries are deleted lazily: the owner validates the top with the stamp
// and pops stale entries, and calls `retain` to compact when stale entries outnumber live ones.

export class MinHeap {
  private readonly keys: number[] = [];
  private readonly seqs: number[] = [];
  private readonly stamps: number[] = [];

  get size(): number {
    return this.seqs.length;
  }

  /** Adds an entry. O(log n); O(1) when keys arrive in ascending order. */
  push(key: number, seq: number, stamp: number): void {
    this.keys.push(key);
    this.seqs.push(seq);
    this.stamps.push(stamp);
    this.siftUp(this.seqs.length - 1);
  }

  /** Key of the top entry; only valid when size > 0. */
  topKey(): number {
    return this.keys[0]!;
  }

  /** Seq of the top entry; only valid when size > 0. */
  topSeq(): number {
    return this.seqs[0]!;
  }

  topStamp(): number {
    return this.stamps[0]!;
  }

  /** Removes the top entry. No-op when empty. */
  pop(): void {
    const last = this.seqs.length - 1;
    if (last < 0) return;
    if (last > 0) this.move(last, 0);
    this.keys.pop();
    this.seqs.pop();
    this.stamps.pop();
    if (last > 0) this.siftDown(0);
  }

  clear(): void {
    this.keys.length = 0;
    this.seqs.length = 0;
    this.stamps.length = 0;
  }

  /** Keeps the entries `keep` accepts and restores the heap order. O(n). */
  retain(keep: (key: number, seq: number, stamp: number) => boolean): void {
    let kept = 0;
    for (let i = 0; i < this.seqs.length; i++) {
      if (keep(this.keys[i]!, this.seqs[i]!, this.stamps[i]!)) {
        if (kept !== i) this.move(i, kept);
        kept++;
      }
    }
    this.keys.length = kept;
    this.seqs.length = kept;
    this.stamps.length = kept;
    for (let i = (kept >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  private less(a: number, b: number): boolean {
    const ka = this.keys[a]!;
    const kb = this.keys[b]!;
    return ka < kb || (ka === kb && this.seqs[a]! < this.seqs[b]!);
  }

  private move(from: number, to: number): void {
    this.keys[to] = this.keys[from]!;
    this.seqs[to] = this.seqs[from]!;
    this.stamps[to] = this.stamps[from]!;
  }

  private swap(a: number, b: number): void {
    const key = this.keys[a]!;
    const seq = this.seqs[a]!;
    const stamp = this.stamps[a]!;
    this.move(b, a);
    this.keys[b] = key;
    this.seqs[b] = seq;
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
    const n = this.seqs.length;
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
