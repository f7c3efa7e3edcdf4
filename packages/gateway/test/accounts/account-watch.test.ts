// AccountWatch's silence detection and retry backoff on a manual clock, against members served
// over real gRPC on 127.0.0.1 that keep the Watch stream open and send only when told. Only the
// clock decides when a silent stream is dropped and when the next member is tried; the test
// waits for real events (a stream reaching a member, a table installed), never for time.

import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ACCOUNTS_SERVICE,
  ManualClock,
  encodeAuthTable,
  type AuthTable,
} from '@spoolmq/protocol';
import { AccountDirectory } from '../../src/accounts/account-directory.js';
import { AccountWatch } from '../../src/accounts/account-watch.js';
import { insecureCredentials } from '../../src/remote/remote-spool-service.js';

type WatchStream = grpc.ServerDuplexStream<Buffer, Buffer>;

/** A member whose Watch streams stay open and silent; `opened` resolves with the next one. */
interface SilentMember {
  readonly address: string;
  opened(): Promise<WatchStream>;
  close(): void;
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

async function silentMember(): Promise<SilentMember> {
  const server = new grpc.Server();
  const waiting: Array<(stream: WatchStream) => void> = [];
  const arrived: WatchStream[] = [];
  const watch = (stream: WatchStream): void => {
    stream.on('error', () => undefined);
    const next = waiting.shift();
    if (next !== undefined) next(stream);
    else arrived.push(stream);
  };
  const call = (_: unknown, callback: grpc.sendUnaryData<Buffer>): void =>
    callback({ code: grpc.status.UNIMPLEMENTED });
  server.addService(ACCOUNTS_SERVICE, { watch, call });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error === null ? resolve(bound) : reject(error),
    ),
  );
  const member = {
    address: `127.0.0.1:${port}`,
    opened: () => {
      const ready = arrived.shift();
      if (ready !== undefined) return Promise.resolve(ready);
      return new Promise<WatchStream>((resolve) => waiting.push(resolve));
    },
    close: () => server.forceShutdown(),
  };
  cleanups.push(member.close);
  return member;
}

function authTable(version: number): AuthTable {
  return { version, accounts: [], keys: [] };
}

/** A directory that resolves `installed` with each table's version as it is replaced. */
function watchedDirectory(clock: ManualClock) {
  const directory = new AccountDirectory({ clock });
  const waiting: Array<(version: number) => void> = [];
  const replace = directory.replace.bind(directory);
  directory.replace = (table: AuthTable): void => {
    replace(table);
    waiting.shift()?.(table.version);
  };
  const installed = (): Promise<number> => new Promise((resolve) => waiting.push(resolve));
  return { directory, installed };
}

describe('AccountWatch on a manual clock', () => {
  it('drops a silent stream after silenceMsMax, waits retryMsMin, then watches the next member', async () => {
    const clock = new ManualClock(0);
    const a = await silentMember();
    const b = await silentMember();
    const { directory } = watchedDirectory(clock);
    const watch = new AccountWatch({
      members: { a: a.address, b: b.address },
      directory,
      clock,
      silenceMsMax: 1_000,
      retryMsMin: 100,
      credentials: insecureCredentials,
    });
    cleanups.push(() => watch.close());
    await a.opened();
    expect(watch.stats()).toMatchObject({ member: 'a', switches: 0 });
    // Checked every 250 ms: silent for 750 ms is kept, for 1,000 ms is dropped.
    await clock.advance(999);
    expect(watch.stats()).toMatchObject({ member: 'a', switches: 0 });
    await clock.advance(1);
    expect(watch.stats()).toMatchObject({ switches: 1 });
    const bOpened = b.opened();
    await clock.advance(99);
    expect(watch.stats().member).toBe('a'); // still backing off: no stream to b yet
    await clock.advance(1);
    expect(watch.stats()).toMatchObject({ member: 'b', switches: 1 });
    await bOpened;
  });

  it('counts a table as hearing from the member: the silence starts again from it', async () => {
    const clock = new ManualClock(0);
    const a = await silentMember();
    const { directory, installed } = watchedDirectory(clock);
    const watch = new AccountWatch({
      members: { a: a.address },
      directory,
      clock,
      silenceMsMax: 1_000,
      credentials: insecureCredentials,
    });
    cleanups.push(() => watch.close());
    const stream = await a.opened();
    await clock.advance(600);
    const version = installed();
    stream.write(Buffer.from(encodeAuthTable(authTable(3))));
    expect(await version).toBe(3);
    // Heard at 600: every check up to 1,500 finds it silent for less than 1,000 ms.
    await clock.advance(1_149);
    expect(watch.stats()).toMatchObject({ member: 'a', tables: 1, switches: 0, version: 3 });
    await clock.advance(1); // the check at 1,750: silent for 1,150 ms
    expect(watch.stats()).toMatchObject({ switches: 1 });
  });
});
