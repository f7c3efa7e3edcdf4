// Which member is the primary of each spool, as far as this gateway knows: learned from answers,
// forgotten on not-primary answers and broken links. Also the spools asked about (for readiness)
// and the order members are tried in when the primary is unknown. No I/O, no clock.

import assert from 'node:assert/strict';

export class PrimaryTable {
  /** Spool -> its primary's id, or null while unknown. Insertion order = age, for eviction. */
  private readonly primaries = new Map<string, string | null>();
  private readonly indexOf = new Map<string, number>();
  private cursor = 0;

  /**
   * `members`: ids in the order they are tried, non-empty, no repeats. `spoolsTrackedMax`: spools
   * remembered at most (>= 1); past it the oldest is forgotten.
   */
  constructor(
    readonly members: readonly string[],
    private readonly spoolsTrackedMax: number,
  ) {
    assert(members.length > 0, 'at least one member');
    assert(spoolsTrackedMax >= 1, 'spoolsTrackedMax >= 1');
    members.forEach((id, index) => this.indexOf.set(id, index));
    assert(this.indexOf.size === members.length, 'member ids are unique');
  }

  has(member: string): boolean {
    return this.indexOf.has(member);
  }

  /** The member to try first for `spool`: its known primary, else the next in round robin. */
  firstFor(spool: string): string {
    this.track(spool);
    const known = this.primaries.get(spool);
    if (known !== null && known !== undefined) return known;
    const member = this.members[this.cursor % this.members.length]!;
    this.cursor = (this.cursor + 1) % this.members.length;
    return member;
  }

  /** The member after `member` in the order (wrapping). */
  after(member: string): string {
    const index = this.indexOf.get(member) ?? -1;
    return this.members[(index + 1) % this.members.length]!;
  }

  /** `member` answered as `spool`'s primary. */
  learn(spool: string, member: string): void {
    if (this.primaries.get(spool) === member) return;
    this.primaries.delete(spool); // re-inserted as the newest
    this.primaries.set(spool, member);
    this.evict();
  }

  /** `member` is not (or no longer reachable as) `spool`'s primary. */
  forget(spool: string, member: string): void {
    if (this.primaries.get(spool) === member) this.primaries.set(spool, null);
  }

  primaryOf(spool: string): string | null {
    return this.primaries.get(spool) ?? null;
  }

  /** Starts tracking `spool` (unknown primary) if it is not tracked yet. */
  track(spool: string): void {
    if (this.primaries.has(spool)) return;
    this.primaries.set(spool, null);
    this.evict();
  }

  /** Whether every tracked spool has a known primary. */
  allKnown(): boolean {
    for (const primary of this.primaries.values()) if (primary === null) return false;
    return true;
  }

  /** Up to `max` tracked spools whose primary is unknown. */
  unknown(max: number): string[] {
    const spools: string[] = [];
    for (const [spool, primary] of this.primaries) {
      if (spools.length >= max) break;
      if (primary === null) spools.push(spool);
    }
    return spools;
  }

  private evict(): void {
    while (this.primaries.size > this.spoolsTrackedMax) {
      const oldest = this.primaries.keys().next().value as string;
      this.primaries.delete(oldest);
    }
  }
}
