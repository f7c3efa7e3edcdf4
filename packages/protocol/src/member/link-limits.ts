// Bounds of one gateway->member stream, shared by both ends: the gateway enforces them on what it
// sends, the member on what it accepts and queues. Checked once when a side starts.

import assert from 'node:assert/strict';

export interface MemberLinkLimits {
  /** Target bytes per frame: calls (answers) of a turn are split into frames of at most this,
   *  except that one call (answer) larger than it travels alone in its own frame. */
  readonly frameBytesMax: number;
  /** Largest gRPC message either way, bytes; a call or answer encoding to more is refused. Must
   *  exceed the largest message payload (the gateway's messageSizeMaxBytes, up to 64 MiB). */
  readonly messageBytesMax: number;
  /** Calls in flight on one stream (long polls included); more are refused with 503. */
  readonly inflightCallsMax: number;
  /** Encoded bytes queued and not yet taken by the socket, per stream; past it the gateway refuses
   *  new calls with 503 and the member stops reading calls until the socket drains. */
  readonly queuedBytesMax: number;
}

export const MEMBER_LINK_LIMITS_DEFAULT: MemberLinkLimits = {
  frameBytesMax: 1 << 20,
  messageBytesMax: 80 << 20,
  inflightCallsMax: 20_000,
  queuedBytesMax: 128 << 20,
};

/** Defaults filled in; throws (assertion) when the bounds make no sense together. */
export function resolveLinkLimits(limits: Partial<MemberLinkLimits> = {}): MemberLinkLimits {
  const resolved = { ...MEMBER_LINK_LIMITS_DEFAULT, ...limits };
  assert(resolved.frameBytesMax > 0, 'frameBytesMax > 0');
  assert(resolved.frameBytesMax <= resolved.messageBytesMax, 'frameBytesMax <= messageBytesMax');
  assert(resolved.inflightCallsMax > 0, 'inflightCallsMax > 0');
  assert(resolved.queuedBytesMax >= resolved.messageBytesMax, 'queuedBytesMax >= messageBytesMax');
  return resolved;
}
