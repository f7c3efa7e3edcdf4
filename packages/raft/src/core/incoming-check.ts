// Checks a message from the network against what the receiving core holds, before the core
// sees it. The core asserts its invariants (a conflict never truncates a committed entry, entries
// come contiguous); a message that would trip one comes from a broken or hostile peer, never from
// an honest leader, and must cost that one message, not the group. Pure: no I/O, no time.

import { type AppendEntries, type Message, MessageType } from '../types.js';
import type { RaftCore } from './raft.js';

/**
 * Why `message` must be dropped unseen by `core`, or null when the core may step it. Only shapes
 * the core would assert on are judged here; everything else (stale terms, mismatched logs) is
 * the core's to answer as Raft says.
 */
export function refuseIncoming(core: RaftCore, message: Message): string | null {
  if (message.type === MessageType.AppendEntries) return refuseAppend(core, message);
  if (message.type === MessageType.InstallSnapshot) {
    if (message.meta.term > message.term) return 'snapshot term above the message term';
  }
  if (message.type === MessageType.RepairRequest) {
    if (message.origin === '') return 'repair request without an origin';
    const { lastLogTerm, lastLogIndex, damageTerm, damageIndex } = message;
    if (lastLogTerm > damageTerm || (lastLogTerm === damageTerm && lastLogIndex >= damageIndex)) {
      // A damaged log ending in a later term covers its damage: the request is a lie.
      return 'repair request from a log that covers its damage';
    }
  }
  return null;
}

function refuseAppend(core: RaftCore, message: AppendEntries): string | null {
  if (message.prevLogTerm > message.term) return 'prevLogTerm above the message term';
  let expected = message.prevLogIndex + 1;
  let lastTerm = message.prevLogTerm;
  for (const entry of message.entries) {
    if (entry.index !== expected) return `entries not contiguous at index ${entry.index}`;
    if (entry.term < lastTerm || entry.term > message.term) {
      return `entry ${entry.index} has term ${entry.term} out of order`;
    }
    expected += 1;
    lastTerm = entry.term;
  }
  // A stale leader's message is answered by the core with a rejection; only a current one could
  // make the core truncate. A current leader holds every committed entry (Raft 5.4.3), so an
  // entry that disagrees with one is a lie.
  if (message.term < core.currentTerm()) return null;
  const committed = core.commitIndex();
  for (const entry of message.entries) {
    if (entry.index > committed) break;
    const held = core.termAt(entry.index);
    if (held !== undefined && held !== entry.term) {
      const what = `entry ${entry.index} (term ${entry.term})`;
      return `${what} contradicts the committed log (term ${held})`;
    }
  }
  return null;
}
