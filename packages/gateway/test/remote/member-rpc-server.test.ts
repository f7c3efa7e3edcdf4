// The member service on a server of its own, added to an existing grpc.Server, and sharing the
// Raft transport's port; reached by the gateway's RemoteSpoolService in each case.

import { afterEach, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { RemoteSpoolService, insecureCredentials } from '../../src/remote/remote-spool-service.js';
import { GrpcTransport, INSECURE_CLUSTER } from '@spoolmq/raft';
import { createLocalService } from '@spoolmq/member';
import {
  memberServiceRegistration,
  serveSpoolService,
  startMemberRpcServer,
} from '@spoolmq/member';

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function local(): ReturnType<typeof createLocalService> {
  const service = createLocalService();
  cleanups.push(() => service.close());
  return service;
}

/** Creates a queue and sends and receives one message through a gateway-side service. */
async function roundTrip(address: string): Promise<void> {
  const remote = new RemoteSpoolService({
    members: { m: address },
    probeSpools: [],
    credentials: insecureCredentials,
  });
  cleanups.push(() => remote.close());
  await remote.createQueue('default', 'jobs', {});
  const sent = await remote.send('default', 'jobs', { payload: new Uint8Array([1, 2]), delayMs: 0, wantHandle: false });
  const delivery = await remote.receive('default', 'jobs', { waitMs: 0 });
  expect(delivery?.messageId).toBe(sent.messageId);
  await remote.ack('default', delivery!.lease);
}

describe('member rpc server', () => {
  it('serves standalone on an ephemeral port', async () => {
    const server = await startMemberRpcServer({
      listen: '127.0.0.1:0',
      service: local(),
      security: INSECURE_CLUSTER,
    });
    cleanups.push(() => server.close());
    expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
    await roundTrip(server.address);
    expect(server.stats()).toMatchObject({ streamsOpened: 1, calls: 4 });
  });

  it('adds itself to an existing grpc.Server', async () => {
    const server = new grpc.Server();
    const registration = serveSpoolService(server, local(), { security: INSECURE_CLUSTER });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    cleanups.push(() => server.forceShutdown());
    await roundTrip(`127.0.0.1:${port}`);
    expect(registration.stats().calls).toBe(4);
  });

  it('shares the Raft transport\'s port', async () => {
    const registration = memberServiceRegistration(local());
    const transport = await GrpcTransport.start({
      selfId: 'n1',
      listen: '127.0.0.1:0',
      peers: {},
      services: [registration],
      security: INSECURE_CLUSTER,
    });
    cleanups.push(() => transport.close());
    await roundTrip(transport.address);
    expect(registration.stats().streamsOpened).toBe(1);
  });
});
