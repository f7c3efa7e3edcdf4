// Waits on what a Raft group applies: a condition checked after every turn of the group's node
// (RaftNode.watch: the node turns at least once a tick, and after every batch it applies), or the
// node's own applied index (RaftNode.appliedThrough), bounded on the cluster clock. No polling:
// the node's turns are when what is waited for can change.

import { MqError } from '@spoolmq/engine';
import type { RaftNode } from '@spoolmq/raft';
import type { Clock, TimerHandle } from '@spoolmq/protocol';
import { unavailable } from './cluster-errors.js';

/** What a wait needs of its member. */
export interface WaitHost {
  readonly id: string;
  /** The cluster layer's clock: the waits' bounds run on it. */
  readonly clock: Clock;
  /** The member is closing or closed: every wait ends. */
  isClosing(): boolean;
}

/**
 * Resolves true once `condition` holds, false once `waitMs` pass on the cluster clock. Checked
 * after every turn of `node` (the Raft group whose applies the condition waits for). Throws 503
 * unavailable when the member or the node closes meanwhile.
 */
export async function untilApplied(
  host: WaitHost,
  node: RaftNode,
  condition: () => boolean,
  waitMs: number,
): Promise<boolean> {
  if (condition()) return true;
  let expired = false;
  const timer = host.clock.setTimer(() => (expired = true), waitMs);
  try {
    await node.watch((resolve, reject) => {
      if (host.isClosing()) return reject(memberClosed(host.id));
      if (expired || condition()) resolve();
    });
  } catch (error) {
    // The node rejects its watchers only when it closes, which the member does when closing.
    throw error instanceof MqError ? error : memberClosed(host.id);
  } finally {
    host.clock.clearTimer(timer);
  }
  return condition();
}

/** 503 unavailable: member `id` closed during an admin command. */
export function memberClosed(id: string): MqError {
  return unavailable(`member ${id} closed; run the command again`);
}

/**
 * Resolves once `node` has applied every entry it loaded as committed (a freshly started node
 * does in its first turns), after `waitMs` on `clock`, or when the node closes: a node that
 * cannot apply is then judged by its own status. Never rejects.
 */
export async function appliedCommitted(
  node: RaftNode,
  clock: Clock,
  waitMs: number,
): Promise<void> {
  let timer: TimerHandle | undefined;
  const expired = new Promise<void>((resolve) => {
    timer = clock.setTimer(resolve, waitMs);
  });
  const applied = node.appliedThrough(node.status().commitIndex).catch(() => undefined);
  await Promise.race([applied, expired]);
  if (timer !== undefined) clock.clearTimer(timer);
}
