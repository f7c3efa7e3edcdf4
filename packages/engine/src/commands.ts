// Replicated commands: what goes into the spool's log, and what applying one returns. Commands are
// plain objects; `command-codec.ts` gives them a compact binary form. Every command that targets a
// message names it by (queueGen, seq, gen) and apply re-checks all three, so a command that lost a
// race (the message moved on) is a deterministic no-op answering `gone` on every replica.

import type { MqError } from './errors.js';
import type { Plan } from './plan.js';
import type { DeleteMode, SettingsPatch } from './service.js';
import type { Settings } from './settings.js';

/** A message as a command names it. */
export interface MessageRef {
  readonly queueGen: number;
  readonly seq: number;
  readonly gen: number;
}

export interface CreateQueueCommand {
  readonly type: 'createQueue';
  readonly name: string;
  readonly settings: Settings;
}

export interface UpdateQueueCommand {
  readonly type: 'updateQueue';
  readonly queueGen: number;
  /** Absent fields unchanged; `recvRateLimit: null` removes the limit. */
  readonly change: SettingsPatch;
}

export interface DeleteQueueCommand {
  readonly type: 'deleteQueue';
  readonly queueGen: number;
  readonly mode: DeleteMode;
}

export interface SendCommand {
  readonly type: 'send';
  readonly queueGen: number;
  /** 0 .. 604,800,000. */
  readonly delayMs: number;
  /** 16 bytes, or null for no dedup. */
  readonly dedupKey: Uint8Array | null;
  readonly payload: Uint8Array;
}

export interface SettleCommand extends MessageRef {
  readonly type: 'ack' | 'nack' | 'fail' | 'discard';
}

export interface DelayCommand extends MessageRef {
  readonly type: 'release' | 'recover';
  /** 0 .. 604,800,000; 0 is immediate. */
  readonly delayMs: number;
}

export interface AckAndSendCommand extends MessageRef {
  readonly type: 'ackAndSend';
  readonly targetGen: number;
  readonly delayMs: number;
  readonly dedupKey: Uint8Array | null;
  readonly payload: Uint8Array;
}

/** Retention: the primary names the messages that expired (leased ones are not expired). */
export interface ExpireCommand {
  readonly type: 'expire';
  readonly queueGen: number;
  readonly seqs: readonly number[];
  readonly gens: readonly number[];
}

/**
 * The spool's plan limits from now on (the metadata decided them; the primary logs them so every
 * replica applies the same caps at the same point of the log).
 */
export interface SetPlanCommand {
  readonly type: 'setPlan';
  readonly plan: Plan;
  /**
   * Where the metadata decided this plan (its log index, >= 0). A setPlan older than the one
   * applied (a primary whose metadata lagged) changes nothing.
   */
  readonly version: number;
}

export type Command =
  | SetPlanCommand
  | CreateQueueCommand
  | UpdateQueueCommand
  | DeleteQueueCommand
  | SendCommand
  | SettleCommand
  | DelayCommand
  | AckAndSendCommand
  | ExpireCommand;

export type CommandType = Command['type'];

export interface OkResult {
  readonly kind: 'ok';
}
/** The target message moved on (or its queue is gone): nothing changed. */
export interface GoneResult {
  readonly kind: 'gone';
}
export interface AppendedResult {
  readonly kind: 'appended';
  readonly queueGen: number;
  readonly seq: number;
}
/** Dedup hit of a send: nothing appended; `seq` is the original's. */
export interface DuplicateResult {
  readonly kind: 'duplicate';
  readonly seq: number;
}
export interface QueueResult {
  readonly kind: 'queue';
  readonly queueGen: number;
}
export interface DeletedResult {
  readonly kind: 'deleted' | 'draining';
}
export interface ExpiredResult {
  readonly kind: 'expired';
  readonly count: number;
}
/** The command was refused before changing anything; the error carries the interface's kind. */
export interface RefusedResult {
  readonly kind: 'refused';
  readonly error: MqError;
}

export type ApplyResult =
  | OkResult
  | GoneResult
  | AppendedResult
  | DuplicateResult
  | QueueResult
  | DeletedResult
  | ExpiredResult
  | RefusedResult;

export const OK: OkResult = Object.freeze({ kind: 'ok' });
export const GONE: GoneResult = Object.freeze({ kind: 'gone' });
