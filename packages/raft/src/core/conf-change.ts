// Single-server membership changes (Raft thesis 4.1): one member added, promoted or removed per
// ConfChange entry. A configuration takes effect on a member as soon as the entry is in its log
// (committed or not), and the leader allows a new change only once the previous one committed.
//
// Encoding of a ConfChange entry's data (stable, versioned):
//   byte 0: format version (1)
//   byte 1: change type (ConfChangeType)
//   bytes 2..: member id, UTF-8

import type { ClusterConfig, NodeId } from '../types.js';
import { defined } from './assert.js';

export const enum ConfChangeType {
  /** Add a voting member (or promote a learner, if the node is one). */
  AddVoter = 0,
  /** Add a non-voting member that receives the log (catch-up before promotion, thesis 4.2.1). */
  AddLearner = 1,
  /** Remove a voter or a learner. */
  RemoveMember = 2,
  /** Turn a learner into a voter. */
  PromoteLearner = 3,
}

export interface ConfChange {
  readonly type: ConfChangeType;
  readonly node: NodeId;
}

const FORMAT_VERSION = 1;
const TYPE_MAX = ConfChangeType.PromoteLearner;
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Encodes a change as entry data. The node id must be non-empty. */
export function encodeConfChange(change: ConfChange): Uint8Array {
  if (change.node.length === 0) throw new RangeError('raft: conf change node id is empty');
  const id = encoder.encode(change.node);
  const out = new Uint8Array(2 + id.length);
  out[0] = FORMAT_VERSION;
  out[1] = change.type;
  out.set(id, 2);
  return out;
}

/** Decodes entry data written by `encodeConfChange`. Throws `RangeError` on malformed data. */
export function decodeConfChange(data: Uint8Array): ConfChange {
  if (data.length < 3 || data[0] !== FORMAT_VERSION) {
    throw new RangeError('raft: malformed conf change entry');
  }
  const type = defined(data[1], 'conf change type byte (length checked)');
  if (type > TYPE_MAX) throw new RangeError(`raft: unknown conf change type ${type}`);
  return { type: type as ConfChangeType, node: decoder.decode(data.subarray(2)) };
}

function without(list: readonly NodeId[], node: NodeId): NodeId[] {
  return list.filter((member) => member !== node);
}

/**
 * The configuration after `change`. Total and deterministic, so every replica computes the same
 * result from the same log; a change that does not apply (adding an existing voter, removing a
 * stranger) leaves the configuration as it is. Validation against the current configuration
 * happens on the leader (`checkConfChange`) before the entry is appended.
 */
export function applyConfChange(config: ClusterConfig, change: ConfChange): ClusterConfig {
  const { node } = change;
  switch (change.type) {
    case ConfChangeType.AddVoter:
    case ConfChangeType.PromoteLearner:
      if (config.voters.includes(node)) return config;
      if (change.type === ConfChangeType.PromoteLearner && !config.learners.includes(node)) {
        return config;
      }
      return { voters: [...config.voters, node], learners: without(config.learners, node) };
    case ConfChangeType.AddLearner:
      if (config.voters.includes(node) || config.learners.includes(node)) return config;
      return { voters: config.voters, learners: [...config.learners, node] };
    case ConfChangeType.RemoveMember:
      return { voters: without(config.voters, node), learners: without(config.learners, node) };
  }
}

/** Why a leader refuses a change against `config`, or null when it may be proposed. */
export function checkConfChange(config: ClusterConfig, change: ConfChange): string | null {
  const isVoter = config.voters.includes(change.node);
  const isLearner = config.learners.includes(change.node);
  switch (change.type) {
    case ConfChangeType.AddVoter:
      return isVoter ? `${change.node} is already a voter` : null;
    case ConfChangeType.AddLearner:
      return isVoter || isLearner ? `${change.node} is already a member` : null;
    case ConfChangeType.PromoteLearner:
      return isLearner ? null : `${change.node} is not a learner`;
    case ConfChangeType.RemoveMember:
      if (!isVoter && !isLearner) return `${change.node} is not a member`;
      if (isVoter && config.voters.length === 1) return 'cannot remove the last voter';
      return null;
  }
}

/** True when both configurations have the same voters and learners (order ignored). */
export function sameConfig(a: ClusterConfig, b: ClusterConfig): boolean {
  const same = (x: readonly NodeId[], y: readonly NodeId[]): boolean =>
    x.length === y.length && x.every((member) => y.includes(member));
  return same(a.voters, b.voters) && same(a.learners, b.learners);
}
