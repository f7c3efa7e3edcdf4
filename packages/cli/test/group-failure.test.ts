import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServe } from '../src/commands/serve.js';
import { EXIT_GROUP_FAILED, untilShutdownOrFailure, watchGroupFailures } from '../src/group-failure.js';
import { captureIo } from './io.js';

describe('a Raft group that stops on its own state', () => {
  it('is logged at error level with its group, and ends the command with status 70', async () => {
    const c = captureIo();
    const watch = watchGroupFailures(c.io.logger);
    watch.hooks.onRaftRejected('spool:a/default#1', 'n2', 'entry 5 contradicts the committed log');
    watch.hooks.onGroupFailure('spool:a/default#1', new Error('conflict at committed index 5'));
    const status = await untilShutdownOrFailure(new AbortController().signal, watch.failed, c.io.logger);
    expect(status).toBe(EXIT_GROUP_FAILED);
    expect(c.logs.map((record) => [record['level'], record['group']])).toEqual([
      [40, 'spool:a/default#1'],
      [50, 'spool:a/default#1'],
      [50, 'spool:a/default#1'],
    ]);
    const shutdown = new AbortController();
    shutdown.abort();
    expect(await untilShutdownOrFailure(shutdown.signal, new Promise(() => undefined), c.io.logger)).toBe(0);
  });

  it('logs entries dropped for bad bytes at error level, a stale tail at warn', () => {
    const c = captureIo();
    const watch = watchGroupFailures(c.io.logger);
    const report = { group: 'spool:a/q#1', firstDroppedIndex: 6, droppedEntries: 3 };
    watch.hooks.onTornTail({ ...report, reason: 'checksum' });
    watch.hooks.onTornTail({ ...report, reason: 'gap' });
    expect(c.logs.map((record) => [record['level'], record['group'], record['count']])).toEqual([
      [50, 'spool:a/q#1', 3],
      [40, 'spool:a/q#1', 3],
    ]);
    expect(String(c.logs[0]!['msg'])).toMatch(/failed their checksum .* repaired/);
  });

  it('logs a repaired group, saying whether a leader or a peer sent what was lost', () => {
    const c = captureIo();
    const watch = watchGroupFailures(c.io.logger);
    const damage = { lastIndex: 285, lastTerm: 7 };
    watch.hooks.onRaftRepaired('spool:a/q#1', { damage, from: 'n4', fromPeer: true });
    watch.hooks.onRaftRepaired('spool:a/q#1', { damage, from: 'n1', fromPeer: false });
    expect(c.logs.map((record) => [record['level'], record['group'], record['from']])).toEqual([
      [40, 'spool:a/q#1', 'n4'],
      [40, 'spool:a/q#1', 'n1'],
    ]);
    expect(String(c.logs[0]!['msg'])).toMatch(/up to index 285, term 7.*from n4, with no leader/);
    expect(String(c.logs[1]!['msg'])).toMatch(/from the leader n1/);
  });

  it('logs a corrupt snapshot: dropped for repair, or kept by a sole member (once per group)', () => {
    const c = captureIo();
    const watch = watchGroupFailures(c.io.logger);
    const group = 'spool:a/q#1';
    watch.hooks.onTornTail({ group, firstDroppedIndex: 1, droppedEntries: 4, reason: 'snapshot' });
    for (let i = 0; i < 3; i++) {
      watch.hooks.onTornTail({ group, firstDroppedIndex: 1, droppedEntries: 0, reason: 'snapshot-kept' });
    }
    expect(c.logs.map((record) => [record['level'], record['group']])).toEqual([
      [50, group],
      [50, group],
    ]);
    expect(String(c.logs[0]!['msg'])).toMatch(/snapshot file failed its checksum .* sent it a snapshot/);
    expect(String(c.logs[1]!['msg'])).toMatch(/no peer holds a copy .* stays down/);
  });

  it('logs a hard state lost with its copy once per group: the group stays down', () => {
    const c = captureIo();
    const watch = watchGroupFailures(c.io.logger);
    for (const group of ['spool:a/q#1', 'spool:a/q#1', 'spool:b/q#1']) {
      watch.hooks.onTornTail({ group, firstDroppedIndex: 0, droppedEntries: 0, reason: 'hard-state-lost' });
    }
    expect(c.logs.map((record) => [record['level'], record['group']])).toEqual([
      [50, 'spool:a/q#1'],
      [50, 'spool:b/q#1'],
    ]);
    expect(String(c.logs[0]!['msg'])).toMatch(
      /hard state record and the record's copy both failed .* stays down while the others serve/,
    );
  });

  it('logs a payload no replica could repair in one error line naming spool, queue and seq', () => {
    const c = captureIo();
    const watch = watchGroupFailures(c.io.logger);
    watch.hooks.onPayloadUnrepaired({ group: 'spool:acme/default#3', queue: 'jobs', seq: 17, asked: 0 });
    expect(c.logs).toHaveLength(1);
    expect(c.logs[0]).toMatchObject({
      level: 50,
      event: 'payload_unrepaired',
      spool: 'acme/default',
      queue: 'jobs',
      seq: 17,
    });
    expect(String(c.logs[0]!['msg'])).toMatch(
      /^spool acme\/default queue jobs message seq 17: .* no other replica to ask; the message stays unavailable/,
    );
  });

  it('logs a payload record the scrub found bad in one error line naming spool, queue and seq', () => {
    const c = captureIo();
    const watch = watchGroupFailures(c.io.logger);
    const problem = 'checksum mismatch at 3:4096';
    watch.hooks.onPayloadScrubBad({ group: 'spool:acme/default#3', queue: 'jobs', seq: 9, problem });
    expect(c.logs).toHaveLength(1);
    expect(c.logs[0]).toMatchObject({
      level: 50,
      event: 'payload_scrub_bad',
      spool: 'acme/default',
      queue: 'jobs',
      seq: 9,
      problem,
    });
    expect(String(c.logs[0]!['msg'])).toMatch(
      /^spool acme\/default queue jobs message seq 9: the scrub found .*checksum mismatch.* fetched/,
    );
  });

  it('logs a storage recovery (start and retries at error level, the end at info), never exits', async () => {
    const c = captureIo();
    const watch = watchGroupFailures(c.io.logger);
    const error = new Error('raft storage: batch write failed: ENOSPC');
    watch.hooks.onStorageRecovery({ kind: 'started', group: 'spool:a/default#1', error });
    watch.hooks.onStorageRecovery({ kind: 'retrying', attempt: 1, error });
    watch.hooks.onStorageRecovery({ kind: 'recovered', attempts: 2, downMs: 1500 });
    expect(c.logs.map((record) => [record['level'], record['event']])).toEqual([
      [50, 'storage_recovery_started'],
      [50, 'storage_recovery_retrying'],
      [30, 'storage_recovery_recovered'],
    ]);
    expect(c.logs[2]!['msg']).toBe('storage recovered after 1500 ms (2 attempts); serving again');
    const shutdown = new AbortController();
    setImmediate(() => shutdown.abort());
    expect(await untilShutdownOrFailure(shutdown.signal, watch.failed, c.io.logger)).toBe(0);
  });

  it('makes mq serve unready and reports the group for the exit', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'mq-group-failure-'));
    const admin = { adminHost: '127.0.0.1', adminPort: 0, adminTokenFile: null, adminToken: 'a'.repeat(32) };
    const handle = await startServe({ dataDir, host: '127.0.0.1', port: 0, ...admin, tls: null, adminTls: null, connectionsPerAddress: 1024 });
    try {
      const root = handle.baseUrl.replace(/\/v1$/, '');
      expect((await fetch(`${root}/readyz`)).status).toBe(200);
      const replica = handle.member.replica('default')!;
      // What an assertion on the node's own state does: the node stops itself.
      (replica.node as unknown as { fail(error: Error): void }).fail(new Error('invariant broken'));
      expect(await handle.failed).toBe(replica.group);
      expect((await fetch(`${root}/readyz`)).status).toBe(503);
    } finally {
      await handle.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
