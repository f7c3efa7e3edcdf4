// Payloads on disk through a whole member: a member with a data directory keeps its spools'
// payloads in segment files, and a restart on the same directory (after its snapshot was taken
// and its log truncated) serves every payload byte for byte.
import { INSECURE_CLUSTER } from '@spoolmq/raft';
import { readdir, rm } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Member } from '../../src/cluster/member.js';
import { FAST_RAFT, receiveNow, waitFor } from '../cluster/helpers.js';

const dirs: string[] = [];
const members: Member[] = [];
afterEach(async () => {
  for (const member of members.splice(0)) await member.close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const RAFT = { ...FAST_RAFT, snapshotEntries: 8, retainEntries: 0 };

async function startMember(dataDir: string): Promise<Member> {
  const member = await Member.start({
    id: 'n1',
    peers: { n1: '127.0.0.1:0' },
    listen: '127.0.0.1:0',
    security: INSECURE_CLUSTER,
    dataDir,
    raft: RAFT,
  });
  members.push(member);
  await member.ready();
  await waitFor(() => member.replica('default')?.isServing() === true);
  return member;
}

const payloadOf = (i: number): Uint8Array =>
  Uint8Array.from({ length: 1000 + i }, (_, j) => (i * 13 + j) & 0xff);

describe('a member with a data directory', () => {
  it('keeps payloads in segment files and serves them after a restart', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'mq-member-payloads-'));
    dirs.push(dataDir);
    let member = await startMember(dataDir);
    await member.service.createQueue('default', 'q', {});
    for (let i = 0; i < 40; i++) {
      await member.service.send('default', 'q', { payload: payloadOf(i), delayMs: 0, wantHandle: false });
    }
    const replica = member.replica('default')!;
    await waitFor(() => replica.status().snapshotIndex > 20);
    const stores = await readdir(join(dataDir, 'payloads'));
    expect(stores.length).toBeGreaterThan(0);
    await member.close();
    members.splice(0);

    member = await startMember(dataDir);
    for (let i = 0; i < 40; i++) {
      const delivery = await receiveNow(member.service, 'q');
      expect(Buffer.from(delivery.payload).equals(payloadOf(i)), `payload ${i}`).toBe(true);
      await member.service.ack('default', delivery.lease);
    }
  });
});
