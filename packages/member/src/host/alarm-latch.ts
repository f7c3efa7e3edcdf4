// The hysteresis both growth watermarks share (disk and memory): raised when a sample passes the
// high mark, cleared only once a later one is back past the clear mark (so it does not flap),
// with counts of raises and of growth calls refused while it is up.

/** What a sample changed: the alarm was raised, cleared, or neither. */
export type AlarmChange = 'raised' | 'cleared' | null;

export class AlarmLatch {
  private up = false;
  private raised = 0;
  private refused = 0;

  /** One sample: `high` says it passes the high mark, `clear` that it is past the clear mark. */
  update(high: boolean, clear: boolean): AlarmChange {
    if (!this.up && high) {
      this.up = true;
      this.raised++;
      return 'raised';
    }
    if (this.up && clear) {
      this.up = false;
      return 'cleared';
    }
    return null;
  }

  get alarmed(): boolean {
    return this.up;
  }

  /** Whether a growth call is refused now (counted when it is). */
  refuse(): boolean {
    if (this.up) this.refused++;
    return this.up;
  }

  get raisedTotal(): number {
    return this.raised;
  }

  get refusedTotal(): number {
    return this.refused;
  }
}
