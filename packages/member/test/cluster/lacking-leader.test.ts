// LackingLeaderHandOff: a new leader lacking payloads hands over to an up-to-date voter instead
// of opening, waits a bounded number of ticks for one, opens when none comes, when the transfer
// fails or when the fetch ends, and hands over at most once per pause. The cluster behaviour
// (a damaged member made leader gives the leadership back) is in payload-heal.test.ts.

import { ManualClock } from '@spoolmq/protocol';
import { describe, expect, it } from 'vitest';
import {
  LACKING_HAND_OFF_PAUSE_MS,
  LACKING_HEIR_WAIT_TICKS,
  LackingLeaderHandOff,
} from '../../src/cluster/lacking-leader.js';

const TICK_MS = 10;

/** A replica as the hand-off sees it, with what it did recorded. */
function replica(lacking: number) {
  const clock = new ManualClock();
  const state = {
    lacking,
    leading: true,
    peers: true,
    heir: null as string | null,
    transferFails: false,
    opened: [] as number[],
    transfers: [] as string[],
  };
  const handOff = new LackingLeaderHandOff({
    clock,
    tickMs: TICK_MS,
    lacking: () => state.lacking,
    hasPeers: () => state.peers,
    leads: () => state.leading,
    open: (term) => state.opened.push(term),
    heir: () => state.heir,
    transfer: (to) => {
      state.transfers.push(to);
      if (state.transferFails) return Promise.reject(new Error('transfer_failed'));
      state.leading = false;
      return Promise.resolve();
    },
  });
  return { clock, state, handOff };
}

describe('a new leader and the payloads it lacks', () => {
  it('opens at once when it lacks nothing', () => {
    const { state, handOff } = replica(0);
    state.heir = 'n2';
    handOff.lead(3);
    expect(state.opened).toEqual([3]);
    expect(state.transfers).toEqual([]);
    expect(handOff.handOffs).toBe(0);
  });

  it('opens at once as the sole voter of its group, whatever it lacks', () => {
    const { clock, state, handOff } = replica(5);
    state.peers = false;
    handOff.lead(3);
    expect(state.opened).toEqual([3]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('hands over to the heir once one replicates, and does not open', async () => {
    const { clock, state, handOff } = replica(5);
    handOff.lead(3);
    await clock.advance(TICK_MS * 2); // the followers answer the new leader's first appends
    expect(state.transfers).toEqual([]);
    state.heir = 'n2';
    await clock.advance(TICK_MS);
    expect(state.transfers).toEqual(['n2']);
    expect(handOff.handOffs).toBe(1);
    await clock.advance(TICK_MS * LACKING_HEIR_WAIT_TICKS);
    expect(state.opened).toEqual([]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('opens after the wait when no voter is up to date', async () => {
    const { clock, state, handOff } = replica(5);
    handOff.lead(3);
    await clock.advance(TICK_MS * (LACKING_HEIR_WAIT_TICKS - 1));
    expect(state.opened).toEqual([]);
    await clock.advance(TICK_MS);
    expect(state.opened).toEqual([3]);
    expect(state.transfers).toEqual([]);
  });

  it('opens when the fetch ends while it waits, and when the transfer fails', async () => {
    const fetched = replica(5);
    fetched.handOff.lead(3);
    fetched.state.lacking = 0;
    await fetched.clock.advance(TICK_MS);
    expect(fetched.state.opened).toEqual([3]);

    const refused = replica(5);
    refused.state.heir = 'n3';
    refused.state.transferFails = true;
    refused.handOff.lead(4);
    await refused.clock.advance(0);
    expect(refused.state.transfers).toEqual(['n3']);
    expect(refused.state.opened).toEqual([4]);
  });

  it('hands over at most once per pause: leading again soon after, it opens', async () => {
    const { clock, state, handOff } = replica(5);
    state.heir = 'n2';
    handOff.lead(3);
    expect(state.transfers).toEqual(['n2']);
    await clock.advance(LACKING_HAND_OFF_PAUSE_MS - 1);
    state.leading = true; // the heir lacked them too and passed the leadership back
    handOff.lead(5);
    expect(state.opened).toEqual([5]);
    expect(state.transfers).toEqual(['n2']);
    await clock.advance(1);
    state.leading = true;
    handOff.lead(7);
    expect(state.transfers).toEqual(['n2', 'n2']);
    expect(handOff.handOffs).toBe(2);
  });

  it('stops waiting once it no longer leads, and when cancelled', async () => {
    const lost = replica(5);
    lost.handOff.lead(3);
    lost.state.leading = false;
    await lost.clock.advance(TICK_MS * (LACKING_HEIR_WAIT_TICKS + 1));
    expect(lost.state.opened).toEqual([]);
    expect(lost.clock.pendingTimers).toBe(0);

    const closed = replica(5);
    closed.handOff.lead(3);
    closed.handOff.cancel();
    expect(closed.clock.pendingTimers).toBe(0);
  });
});
