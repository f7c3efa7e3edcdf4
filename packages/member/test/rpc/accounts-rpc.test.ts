// The accounts service's Watch on a fake stream and the member's cluster clock: the table at once
// and on every change, heartbeats on the injected clock only while the metadata follows a leader,
// acknowledgements recorded, and nothing left armed once the stream ends.

import { EventEmitter } from 'node:events';
import type * as grpc from '@grpc/grpc-js';
import { WATCH_HEARTBEAT_MS, encodeAck, ManualClock } from '@spoolmq/protocol';
import { describe, expect, it } from 'vitest';
import {
  type AccountWatcher,
  type AuthFeed,
  accountsServiceRegistration,
} from '../../src/rpc/accounts-rpc.js';

class FakeStream extends EventEmitter {
  writable = true;
  readonly written: Buffer[] = [];
  write(bytes: Buffer): boolean {
    this.written.push(bytes);
    return true;
  }
  end(): void {
    this.writable = false;
  }
}

function fixture() {
  const clock = new ManualClock();
  const listeners = new Set<() => void>();
  const acks: number[] = [];
  const watchers = new Set<AccountWatcher>();
  const flags = { current: true };
  const feed: AuthFeed = {
    authTable: () => ({ version: 1, accounts: [], keys: [] }),
    onAuthChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    metaCurrent: () => flags.current,
    addWatcher: () => {
      const watcher = { acked: -1 };
      watchers.add(watcher);
      return watcher;
    },
    removeWatcher: (watcher) => void watchers.delete(watcher),
    ackWatcher: (_watcher, version) => void acks.push(version),
  };
  const service = accountsServiceRegistration(feed, async (call) => call, clock);
  const watch = service.implementation['watch'] as (stream: unknown) => void;
  const stream = new FakeStream();
  watch(stream as unknown as grpc.ServerDuplexStream<Buffer, Buffer>);
  return { clock, listeners, acks, watchers, flags, stream };
}

describe('accounts service Watch', () => {
  it('sends the table, heartbeats on the injected clock, stops when the stream ends', async () => {
    const f = fixture();
    expect(f.stream.written).toHaveLength(1); // the table at once
    await f.clock.advance(WATCH_HEARTBEAT_MS);
    expect(f.stream.written.map((b) => b.byteLength).slice(1)).toEqual([0]);
    f.flags.current = false; // no leader known: silence tells the gateway to look elsewhere
    await f.clock.advance(WATCH_HEARTBEAT_MS);
    expect(f.stream.written).toHaveLength(2);
    for (const listener of f.listeners) listener();
    expect(f.stream.written).toHaveLength(3);
    f.stream.emit('data', Buffer.from(encodeAck(5)));
    expect(f.acks).toEqual([5]);
    f.stream.emit('end');
    expect(f.clock.pendingTimers).toBe(0);
    expect(f.listeners.size).toBe(0);
    expect(f.watchers.size).toBe(0);
  });
});
