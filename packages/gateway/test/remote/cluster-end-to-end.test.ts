// Three members over gRPC on loopback, each serving the member RPC on its Raft port, and a
// gateway-side RemoteSpoolService in front: the client sees one service through a failover.

import { type SpoolService } from '@spoolmq/engine';
import { RemoteSpoolService, insecureCredentials } from '../../src/remote/remote-spool-service.js';
import { INSECURE_CLUSTER, MemoryStorageEngine } from '@spoolmq/raft';
import { afterEach, describe, expect, it } from 'vitest';
import { Member } from '@spoolmq/member';
import { memberServiceRegistration } from '@spoolmq/member';
import { FAST_RAFT, bytes, expectError, waitFor } from '../../../member/test/cluster/helpers.js';

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startMembers(ids: readonly string[]): Promise<Member[]> {
  const placeholder = Object.fromEntries(ids.map((id) => [id, '127.0.0.1:1']));
  const members: Member[] = [];
  for (const id of ids) {
    const storage = new MemoryStorageEngine();
    const member = await Member.start({
      id,
      peers: placeholder,
      listen: '127.0.0.1:0',
      security: INSECURE_CLUSTER,
      storage,
      raft: FAST_RAFT,
      grpcServices: (service: SpoolService) => [memberServiceRegistration(service)],
    });
    members.push(member);
    cleanups.push(async () => {
      await member.close();
      await storage.close();
    });
  }
  const peers = Object.fromEntries(members.map((m) => [m.id, m.address!]));
  for (const member of members) member.setPeerAddresses(peers);
  await Promise.all(members.map((m) => m.ready()));
  return members;
}

describe('members behind a RemoteSpoolService', () => {
  it('follows the primary through a failover; acknowledged sends survive', async () => {
    const members = await startMembers(['e1', 'e2', 'e3']);
    const remote = new RemoteSpoolService({
      members: Object.fromEntries(members.map((m) => [m.id, m.address!])),
      unavailableAfterMs: 10_000,
      credentials: insecureCredentials,
    });
    cleanups.push(() => remote.close());
    await remote.createQueue('default', 'q', {});
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) {
      sent.push((await remote.send('default', 'q', { payload: bytes(i), delayMs: 0, wantHandle: false })).messageId);
    }
    const leased = await remote.receive('default', 'q', { waitMs: 0 });
    expect(leased?.messageId).toBe(sent[0]);

    const primary = members.find((m) => m.replica('default')!.isServing())!;
    await primary.close();
    const rest = members.filter((m) => m !== primary);
    await waitFor(() => rest.some((m) => m.replica('default')!.isServing()), 20_000);

    const gone = await expectError(remote.ack('default', leased!.lease), 'gone');
    expect(gone.details).toEqual({ reason: 'primary_changed' });
    const received: string[] = [];
    for (let i = 0; i < 5; i++) {
      const delivery = await remote.receive('default', 'q', { waitMs: 0 });
      received.push(delivery!.messageId);
      await remote.ack('default', delivery!.lease);
    }
    expect(received).toEqual(sent);
    expect((await remote.describeSpool('default')).stats.total).toBe(0);
  });
});
