// A replica keeps the good copies it holds (issue 14, the chaos finding of seed 20261126):
// - a member whose log was dropped for bad bytes and that was sent a snapshot takes the payloads
//   from its own segment files (by seq, checked) and fetches none;
// - a bit flipped in a member's payload record while it was down is found by the background
//   scrub after the start, before anything reads it, and repaired from a peer; that member then
//   delivers the message with the right bytes.

import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { afterEach, describe, expect, it } from 'vitest';
import { SCRUB_TICK_MS_FIRST } from '../../src/cluster/payload-scrub.js';
import type { Member } from '../../src/cluster/member.js';
import { RECORD_HEADER_BYTES } from '../../src/store/segment-record.js';
import { FAST_RAFT, TestCluster, receiveNow, send, waitFor } from './helpers.js';

let cluster: TestCluster | null = null;

afterEach(async () => {
  await cluster?.close();
  cluster = null;
});

const LOCATION_SPAN = 2 ** 32;
const digest = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const payloadOf = (i: number): Uint8Array =>
  Uint8Array.from({ length: 3000 + i * 97 }, (_, j) => (i * 29 + j * 5) & 0xff);

/** Every message of queue `q` on `member`'s replica, read from its own store: seq -> digest. */
function storedDigests(member: Member): Map<number, string> {
  const engine = member.replica('default')!.engine;
  const out = new Map<number, string>();
  engine.queue('q')!.order.scanAfter(0, (message) => {
    out.set(message.seq, digest(engine.payloadOf(message)));
    return true;
  });
  return out;
}

/**
 * Flips a bit in the lowest-index log entry of group `group` stored under `dataDir` (key layout:
 * packages/raft/src/storage/level-keys.ts, entries end in 0x00 0x03 <u64 index>); returns it.
 */
async function corruptFirstEntry(dataDir: string, group: string): Promise<number> {
  const db = new ClassicLevel<Buffer, Buffer>(join(dataDir, 'log'), {
    keyEncoding: 'buffer',
    valueEncoding: 'buffer',
  });
  await db.open();
  try {
    const prefix = Buffer.concat([Buffer.from([0x01]), Buffer.from(group), Buffer.from([0x00, 0x03])]);
    const end = Buffer.concat([prefix, Buffer.alloc(8, 0xff)]);
    for await (const [key, value] of db.iterator({ gt: prefix, lt: end })) {
      value[value.length >> 1]! ^= 0x20;
      await db.put(key, value, { sync: true });
      return key.readUInt32BE(key.length - 8) * LOCATION_SPAN + key.readUInt32BE(key.length - 4);
    }
    throw new Error(`no stored entry of ${group}`);
  } finally {
    await db.close();
  }
}

/** Flips one bit in the payload record at `location` of `group` in `dataDir`'s segment files. */
function flipPayloadBit(dataDir: string, group: string, location: number): void {
  const no = Math.floor(location / LOCATION_SPAN);
  const offset = location - no * LOCATION_SPAN + RECORD_HEADER_BYTES + 50;
  const segment = `${no.toString(16).padStart(8, '0')}.seg`;
  const fd = openSync(join(dataDir, 'payloads', encodeURIComponent(group), segment), 'r+');
  try {
    const byte = Buffer.alloc(1);
    readSync(fd, byte, 0, 1, offset);
    byte[0]! ^= 0x02;
    writeSync(fd, byte, 0, 1, offset);
  } finally {
    closeSync(fd);
  }
}

// These tests name one primary and send to it; what they check is where payloads come from, not
// elections. FAST_RAFT's 100 ms election timeout lets an event loop stalled for that long on a
// loaded machine start an election mid-test (a NotPrimaryError on the next send), so they run
// with a 500 ms one: still fast, and such an election stays a rare event rather than a flake.
const STEADY_RAFT = { ...FAST_RAFT, electionTicks: 50, leaseTicks: 40 };

describe('a replica keeps the good copies it holds', () => {
  it('sent a snapshot after its log was dropped for bad bytes, it fetches no payload', async () => {
    const raft = { ...STEADY_RAFT, snapshotEntries: 16, retainEntries: 0 };
    const c = await TestCluster.start(['n1', 'n2', 'n3'], {
      level: true,
      raft,
      member: { payloadCacheBytes: 0 },
    });
    cluster = c;
    await Promise.all([...c.members.values()].map((member) => member.ready()));
    const primary = await c.primary();
    await primary.service.createQueue('default', 'q', {});
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await send(primary.service, 'q', payloadOf(i)));
    await c.converged('default');
    const damaged = c.ids.find((id) => id !== primary.id)!;
    const group = c.member(damaged).replica('default')!.group;
    const expected = storedDigests(c.member(damaged));
    expect(expected.size).toBe(20);

    await c.stopMember(damaged);
    const corrupted = await corruptFirstEntry(c.dataDirOf(damaged), group);
    // Entries without payloads, enough that the primary compacts past the corrupted one: the
    // damaged member can be repaired by a snapshot only, and it needs no payload it lacks.
    for (let i = 0; i < 40; i++) await primary.service.updateQueue('default', 'q', { maxRetries: 1 + (i % 5) });
    await waitFor(() => primary.replica('default')!.status().snapshotIndex > corrupted);

    const member = await c.startMember(damaged);
    await member.ready();
    await c.converged('default');
    const status = member.replica('default')!.status();
    expect(status.restores).toBeGreaterThanOrEqual(2); // its own snapshot, then the primary's
    expect(status.payloadsRecovered).toBeGreaterThanOrEqual(20);
    expect([status.payloadsMissing, status.payloadsFetched]).toEqual([0, 0]);
    expect(storedDigests(member)).toEqual(expected);
    for (let i = 0; i < 20; i++) {
      const delivery = await receiveNow(primary.service, 'q');
      expect([delivery.messageId, digest(delivery.payload)]).toEqual([ids[i], digest(payloadOf(i))]);
    }
  });

  it('on memory storage too: a member sent a snapshot after a restart fetches no payload', async () => {
    const raft = { ...STEADY_RAFT, snapshotEntries: 16, retainEntries: 0 };
    const c = await TestCluster.start(['n1', 'n2', 'n3'], { raft });
    cluster = c;
    await Promise.all([...c.members.values()].map((member) => member.ready()));
    const primary = await c.primary();
    await primary.service.createQueue('default', 'q', {});
    for (let i = 0; i < 20; i++) await send(primary.service, 'q', payloadOf(i));
    await c.converged('default');
    const behind = c.ids.find((id) => id !== primary.id)!;
    const expected = storedDigests(c.member(behind));
    const lastIndex = c.member(behind).replica('default')!.status().lastIndex;

    await c.stopMember(behind);
    for (let i = 0; i < 40; i++) await primary.service.updateQueue('default', 'q', { maxRetries: 1 + (i % 5) });
    await waitFor(() => primary.replica('default')!.status().snapshotIndex > lastIndex);
    const member = await c.startMember(behind);
    await member.ready();
    await c.converged('default');
    const status = member.replica('default')!.status();
    // Its own snapshot needs nothing recovered: these are the leader's snapshot's payloads.
    expect(status.payloadsRecovered).toBeGreaterThanOrEqual(20);
    expect([status.payloadsMissing, status.payloadsFetched]).toEqual([0, 0]);
    expect(storedDigests(member)).toEqual(expected);
  });

  it('a bit flipped while down is found by the scrub, repaired from a peer and delivered right', async () => {
    // Snapshots every 8 entries: the victim's record is referenced by the damaged member's own
    // snapshot at restart (a message replayed from the log gets a new record instead).
    const raft = { ...FAST_RAFT, electionTicks: 30, leaseTicks: 24, snapshotEntries: 8 };
    const c = await TestCluster.start(['n1', 'n2', 'n3'], {
      level: true,
      raft,
      member: { payloadCacheBytes: 0 },
    });
    cluster = c;
    await Promise.all([...c.members.values()].map((member) => member.ready()));
    const primary = await c.primary();
    await primary.service.createQueue('default', 'q', {});
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await send(primary.service, 'q', payloadOf(i)));
    await c.converged('default');
    const damaged = c.ids.find((id) => id !== primary.id)!;
    const replica = c.member(damaged).replica('default')!;
    await waitFor(() => replica.status().snapshotIndex >= 8);
    const victim = replica.engine.queue('q')!.order.find(2)!;
    const { group } = replica;
    const { location } = victim;

    await c.stopMember(damaged);
    flipPayloadBit(c.dataDirOf(damaged), group, location);
    const member = await c.startMember(damaged);
    await member.ready();
    await c.converged('default');
    const restarted = member.replica('default')!;
    expect(restarted.status().payloadsScrubBad).toBe(0); // nothing has read it yet
    const release = c.holdPayloadFetches();
    await c.clock.advance(SCRUB_TICK_MS_FIRST);
    await waitFor(() => restarted.status().scrubPasses >= 1);
    expect(restarted.status().payloadsScrubBad).toBe(1);
    // Not ready while it fetches the good copy (the others hold the only ones meanwhile).
    expect(member.service.ready()).toBe(false);
    expect(member.payloadsLacking()).toEqual([{ spool: 'default', fetching: 1, unrepaired: 0 }]);
    // Made leader meanwhile, it does not open (it would answer unavailable for the message it
    // lacks): it hands the leadership to a voter that holds everything.
    await primary.replica('default')!.node.transferLeadership(damaged).catch(() => undefined);
    await waitFor(() => restarted.status().lackingHandOffs === 1);
    const holder = await c.primary();
    expect(holder.id).not.toBe(damaged);
    expect(restarted.status().serving).toBe(false);
    expect(restarted.status().payloadsMissing).toBe(1);
    release();
    await waitFor(() => restarted.status().payloadsMissing === 0);
    expect(member.payloadsLacking()).toEqual([]);
    expect(restarted.status().payloadsFetched).toBe(1);
    await member.ready();

    // The repaired member serves: every message with the right bytes, the repaired one included.
    // From whoever leads now: the hand-over above went to either of the others.
    await (await c.primary()).replica('default')!.node.transferLeadership(damaged);
    const serving = await c.primary();
    expect(serving.id).toBe(damaged);
    for (let i = 0; i < 10; i++) {
      const delivery = await receiveNow(serving.service, 'q');
      expect([delivery.messageId, digest(delivery.payload)]).toEqual([ids[i], digest(payloadOf(i))]);
      expect(delivery.retries).toBe(0);
    }
  });
});
