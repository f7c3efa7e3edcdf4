// Where the host hands every write: a log of engine commands. The local variant applies each
// command at once; the replicated cluster will propose it to the spool's Raft group, wait for
// commit and apply it on the primary, resolving with the same result. Everything else in the host
// is shared between the two.

import type { ApplyResult, Command, SpoolEngine } from '@spoolmq/engine';
import type { Clock } from '@spoolmq/protocol';

export interface CommandLog {
  /** Term of the current primary; tokens minted now carry it, and earlier terms answer 410. */
  readonly term: number;
  /**
   * Appends `command` and resolves with the result of applying it at its entry time (the
   * primary's clock made monotonic). Rejects with MqError (500 operation_unconfirmed, 503
   * unavailable) when the outcome is unknown or the log cannot take writes.
   */
  append(command: Command): Promise<ApplyResult>;
}

/** The in-memory log of the local variant: fixed term 1, applies synchronously on append. */
export class LocalCommandLog implements CommandLog {
  readonly term: number = 1;
  private lastEntryMs = 0;

  constructor(
    private readonly engine: SpoolEngine,
    private readonly clock: Clock,
  ) {}

  append(command: Command): Promise<ApplyResult> {
    return Promise.resolve(this.applyNow(command));
  }

  /** Applies at once and returns the result (the apply happens before `append` returns). */
  applyNow(command: Command): ApplyResult {
    const now = this.clock.nowMs();
    if (now > this.lastEntryMs) this.lastEntryMs = now;
    return this.engine.apply(command, this.lastEntryMs);
  }
}
