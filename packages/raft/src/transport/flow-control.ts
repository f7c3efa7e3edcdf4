// HTTP/2 receive windows of a gRPC server. Node's default window is 64 KiB per stream and per
// connection, and grpc-js has no server option to change it. Every link here is one long-lived
// stream (a member's AppendEntries to a peer, a gateway's multiplexed calls to a member), so that
// window caps a link at 64 KiB per receiver round trip: with 16 KiB payloads, four messages,
// whatever the batch. Raising it lets a frame of a group commit's size cross in one trip; the
// bytes a peer may have in flight stay bounded by the window.

import assert from 'node:assert/strict';
import type { Http2Server, ServerHttp2Session } from 'node:http2';
import type * as grpc from '@grpc/grpc-js';

/** Receive window per stream and per connection, bytes: above the largest transport frame. */
export const RECEIVE_WINDOW_BYTES = 8 * 1024 * 1024;

/**
 * Gives every HTTP/2 session `server` accepts from now on receive windows of `windowBytes` per
 * stream and per connection. Call after `bindAsync` resolved. grpc-js keeps its Node servers in
 * a private map; an assertion fails loudly if a grpc-js upgrade removes it.
 */
export function raiseReceiveWindows(server: grpc.Server, windowBytes = RECEIVE_WINDOW_BYTES): void {
  assert(windowBytes >= 65_535 && windowBytes <= 2 ** 31 - 1, 'HTTP/2 window in [65535, 2^31-1]');
  const internals = server as unknown as { http2Servers?: Map<Http2Server, unknown> };
  const http2Servers = internals.http2Servers;
  assert(
    http2Servers instanceof Map && http2Servers.size > 0,
    'grpc-js server has bound HTTP/2 servers',
  );
  for (const http2Server of http2Servers.keys()) {
    http2Server.on('session', (session: ServerHttp2Session) => raiseSession(session, windowBytes));
  }
}

function raiseSession(session: ServerHttp2Session, windowBytes: number): void {
  try {
    session.setLocalWindowSize(windowBytes);
    session.settings({ initialWindowSize: windowBytes });
  } catch {
    // The session closed before its settings could be sent: nothing to raise.
  }
}
