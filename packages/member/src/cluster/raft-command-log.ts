// The replicated CommandLog: a spool host's writes become entries of the spool's Raft group.
// Each entry carries the primary's entry time, made monotonic per group (max(last, now)), so
// every replica applies each command at the same time. A write resolves with the result of the
// primary's own apply, once the entry is committed (fsynced on a majority) and applied here.

import { type ApplyResult, type Command, MqError } from '@spoolmq/engine';
import type { Proposed } from '@spoolmq/raft';
import type { Clock } from '@spoolmq/protocol';
import type { CommandLog } from '../host/command-log.js';
import { notPrimary, proposalError } from './cluster-errors.js';
import { encodeEntry } from './entry-codec.js';

/** The part of RaftNode the log needs. */
export interface ProposalTarget {
  propose(data: Uint8Array): Promise<Proposed>;
  isLeader(): boolean;
  term(): number;
  leaderId(): string | null;
}

export class RaftCommandLog implements CommandLog {
  private lastEntryMs: number;
  private open = true;

  /**
   * `term`: the Raft term the primary opened in (tokens carry it). `lastEntryMs`: the latest
   * entry time applied so far (epoch ms); entry times never go below it.
   */
  constructor(
    private readonly spool: string,
    private readonly node: ProposalTarget,
    readonly term: number,
    private readonly clock: Clock,
    lastEntryMs: number,
  ) {
    this.lastEntryMs = lastEntryMs;
  }

  /** Stops taking writes (the primary stepped down): later appends answer notPrimary. */
  close(): void {
    this.open = false;
  }

  /**
   * Proposes `command` at the current entry time; resolves with the primary's ApplyResult.
   * Rejects with MqError: 503 unavailable + notPrimary (+ leaderId) when this member no longer
   * leads in `term` (nothing appended); 503 unavailable when Raft is busy; 500
   * operation_unconfirmed when the entry was handed to Raft and its commit cannot be confirmed
   * (leadership lost, node closed).
   */
  append(command: Command): Promise<ApplyResult> {
    const node = this.node;
    if (!this.open || !node.isLeader() || node.term() !== this.term) {
      return Promise.reject(notPrimary(this.spool, node.isLeader() ? null : node.leaderId()));
    }
    const now = this.clock.nowMs();
    if (now > this.lastEntryMs) this.lastEntryMs = now;
    let data: Uint8Array;
    try {
      data = encodeEntry(this.lastEntryMs, command);
    } catch (error) {
      return Promise.reject(new MqError('internal', `spool ${this.spool}: ${String(error)}`));
    }
    return node.propose(data).then(
      (proposed) => this.resultOf(proposed),
      (error: unknown) => {
        throw proposalError(this.spool, error, true);
      },
    );
  }

  private resultOf(proposed: Proposed): ApplyResult {
    // The entry was applied in the term this log proposes for; a command entry applies to a result.
    if (proposed.term !== this.term || proposed.result === null) {
      throw proposalError(this.spool, new Error('entry applied outside the primary term'), true);
    }
    return proposed.result as ApplyResult;
  }
}
