// A payload corrupted on disk on one replica (issue 14, item 3): the message at the head of the
// queue reads `unavailable` in listings and stats while receives get the next message; the
// replica fetches a good copy from a peer, checks it, and the message is delivered with the
// right bytes. With no peer (a single-replica spool, as `mq serve` runs), it stays unavailable,
// one report names spool, queue and seq, and everything else is served.

import { createHash } from 'node:crypto';
import { openSync, closeSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Delivery, SpoolService } from '@spoolmq/engine';
import { afterEach, describe, expect, it } from 'vitest';
import type { UnrepairedPayload } from '../../src/cluster/payload-fetch.js';
import type { Member } from '../../src/cluster/member.js';
import { RECORD_HEADER_BYTES } from '../../src/store/segment-record.js';
import { FAST_RAFT, TestCluster, receiveNow, send, waitFor, waitForAsync } from './helpers.js';

let cluster: TestCluster | null = null;

afterEach(async () => {
  await cluster?.close();
  cluster = null;
});

const LOCATION_SPAN = 2 ** 32;
const digest = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const payloadOf = (i: number): Uint8Array =>
  Uint8Array.from({ length: 4000 + i }, (_, j) => (i * 13 + j * 7) & 0xff);

/** Flips one bit in the payload of message `seq` of queue `q` in member `id`'s segment file. */
function flipPayloadBit(test: TestCluster, member: Member, seq: number): void {
  const replica = member.replica('default')!;
  const message = replica.engine.queue('q')!.order.find(seq)!;
  const no = Math.floor(message.location / LOCATION_SPAN);
  const offset = message.location - no * LOCATION_SPAN + RECORD_HEADER_BYTES + 100;
  const file = join(
    test.dataDirOf(member.id),
    'payloads',
    encodeURIComponent(replica.group),
    `${no.toString(16).padStart(8, '0')}.seg`,
  );
  const fd = openSync(file, 'r+');
  try {
    const byte = Buffer.alloc(1);
    readSync(fd, byte, 0, 1, offset);
    byte[0]! ^= 0x10;
    writeSync(fd, byte, 0, 1, offset);
  } finally {
    closeSync(fd);
  }
}

async function unavailableIds(service: SpoolService): Promise<string[]> {
  const page = await service.listMessages('default', 'q', { state: 'unavailable', limit: 10, withHandles: false });
  return page.items.map((item) => item.id);
}

async function unavailableCount(service: SpoolService): Promise<number> {
  return (await service.spoolStats('default', { limit: 10 })).stats.unavailable;
}

describe('a payload corrupted on one replica', () => {
  it('reads unavailable, the next message is served meanwhile, and it is repaired and delivered right', async () => {
    // No payload cache: every read goes to the segment file, as after a restart.
    cluster = await TestCluster.start(['n1', 'n2', 'n3'], {
      level: true,
      raft: { ...FAST_RAFT, electionTicks: 30, leaseTicks: 24 },
      member: { payloadCacheBytes: 0 },
    });
    await Promise.all([...cluster.members.values()].map((member) => member.ready()));
    const primary = await cluster.primary();
    await primary.service.createQueue('default', 'q', {});
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++) ids.push(await send(primary.service, 'q', payloadOf(i)));
    await cluster.converged('default');

    const release = cluster.holdPayloadFetches();
    flipPayloadBit(cluster, primary, 1);
    const next = await receiveNow(primary.service, 'q');
    expect([next.messageId, digest(next.payload)]).toEqual([ids[1], digest(payloadOf(2))]);
    expect(await unavailableIds(primary.service)).toEqual([ids[0]]);
    expect(await unavailableCount(primary.service)).toBe(1);
    const status = primary.status().spools.find((s) => s.spool === 'default')!;
    expect(status).toMatchObject({ payloadsMissing: 1, payloadReadFailures: 1 });
    // The other replicas are untouched: the replicated state is the same everywhere.
    await cluster.converged('default');

    release();
    await waitForAsync(async () => (await unavailableCount(primary.service)) === 0);
    const repaired: Delivery = await receiveNow(primary.service, 'q');
    expect([repaired.messageId, repaired.retries]).toEqual([ids[0], 0]);
    expect(digest(repaired.payload)).toBe(digest(payloadOf(1)));
    const last = await receiveNow(primary.service, 'q');
    expect([last.messageId, digest(last.payload)]).toEqual([ids[2], digest(payloadOf(3))]);
    expect(primary.replica('default')!.payloadsFetched).toBe(1);
    expect(await unavailableIds(primary.service)).toEqual([]);
  });

  it('many corrupted payloads: every message is delivered once, each with the right bytes', async () => {
    cluster = await TestCluster.start(['n1', 'n2', 'n3'], {
      level: true,
      raft: { ...FAST_RAFT, electionTicks: 30, leaseTicks: 24 },
      member: { payloadCacheBytes: 0 },
    });
    await Promise.all([...cluster.members.values()].map((member) => member.ready()));
    const primary = await cluster.primary();
    await primary.service.createQueue('default', 'q', {});
    const ids: string[] = [];
    for (let i = 1; i <= 200; i++) ids.push(await send(primary.service, 'q', payloadOf(i)));
    await cluster.converged('default');
    for (let seq = 1; seq <= 200; seq += 10) flipPayloadBit(cluster, primary, seq);
    const got = new Map<string, string>();
    for (let attempt = 0; attempt < 1000 && got.size < ids.length; attempt++) {
      const delivery = await primary.service.receive('default', 'q', { waitMs: 1000 });
      if (delivery === null) continue;
      expect(got.has(delivery.messageId)).toBe(false);
      got.set(delivery.messageId, digest(delivery.payload));
      await primary.service.ack('default', delivery.lease);
    }
    expect(ids.map((id) => got.get(id))).toEqual(ids.map((_, i) => digest(payloadOf(i + 1))));
    expect(primary.status().spools.find((s) => s.spool === 'default')).toMatchObject({
      payloadReadFailures: 20,
      payloadsFetched: 20,
      payloadsMissing: 0,
    });
  });

  it('with no other replica it stays unavailable, is reported once, and the rest is served', async () => {
    const reports: UnrepairedPayload[] = [];
    cluster = await TestCluster.start(['n1'], {
      level: true,
      member: { payloadCacheBytes: 0, onPayloadUnrepaired: (report) => reports.push(report) },
    });
    const member = cluster.member('n1');
    await member.ready();
    const primary = await cluster.primary();
    await primary.service.createQueue('default', 'q', {});
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++) ids.push(await send(primary.service, 'q', payloadOf(i)));

    flipPayloadBit(cluster, member, 1);
    const served = [await receiveNow(primary.service, 'q'), await receiveNow(primary.service, 'q')];
    expect(served.map((d) => [d.messageId, digest(d.payload)])).toEqual([
      [ids[1], digest(payloadOf(2))],
      [ids[2], digest(payloadOf(3))],
    ]);
    for (const delivery of served) await primary.service.ack('default', delivery.lease);
    // Reported after a few passes with nobody to ask (their pauses run on the cluster's clock).
    await cluster.clock.advance(1000);
    await waitFor(() => reports.length === 1);
    expect(reports[0]).toMatchObject({ queue: 'q', seq: 1, asked: 0 });
    expect(reports[0]!.group).toBe(member.replica('default')!.group);
    expect(await primary.service.receive('default', 'q', { waitMs: 0 })).toBeNull();
    expect(await unavailableIds(primary.service)).toEqual([ids[0]]);
    expect((await primary.service.spoolStats('default', { limit: 10 })).stats).toMatchObject({
      total: 1,
      visible: 0,
      unavailable: 1,
    });
    const status = member.status().spools.find((s) => s.spool === 'default')!;
    expect(status).toMatchObject({ payloadsMissing: 1, payloadsUnrepaired: 1 });
    // Retries back off on the clock and never report it again; sends and receives go on.
    await cluster.clock.advance(120_000);
    await send(primary.service, 'q', payloadOf(4));
    const fourth = await receiveNow(primary.service, 'q');
    expect(digest(fourth.payload)).toBe(digest(payloadOf(4)));
    expect(reports).toHaveLength(1);
  });
});
