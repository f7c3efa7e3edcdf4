import { INSECURE_CLUSTER } from '../../src/transport/cluster-security.js';
import http2 from 'node:http2';
import { afterEach, describe, expect, it } from 'vitest';
import { RECEIVE_WINDOW_BYTES } from '../../src/transport/flow-control.js';
import { GrpcTransport } from '../../src/transport/grpc-transport.js';

let transport: GrpcTransport | null = null;
let client: http2.ClientHttp2Session | null = null;

afterEach(async () => {
  client?.destroy();
  client = null;
  await transport?.close();
  transport = null;
});

/** The stream window the server advertises to a peer, once it settles on a raised one. */
function advertisedWindow(session: http2.ClientHttp2Session): Promise<number> {
  return new Promise((resolve) => {
    session.on('remoteSettings', (settings) => {
      if (settings.initialWindowSize !== 65_535) resolve(settings.initialWindowSize!);
    });
  });
}

describe('raiseReceiveWindows', () => {
  it('advertises the raised per-stream receive window to every peer that connects', async () => {
    transport = await GrpcTransport.start({
      selfId: 'n1',
      listen: '127.0.0.1:0',
      peers: {},
      security: INSECURE_CLUSTER,
    });
    client = http2.connect(`http://${transport.address}`);
    client.on('error', () => undefined);
    expect(await advertisedWindow(client)).toBe(RECEIVE_WINDOW_BYTES);
  });
});
