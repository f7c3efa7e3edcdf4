import { describe, expect, it } from 'vitest';
import { GroupCommit, type CommitSink } from '../../src/storage/group-commit.js';
import { StorageError, isStorageError } from '../../src/storage/storage-error.js';

/** A sink whose writes complete when the test says so, recording what each batch held. */
class ManualSink implements CommitSink<string[]> {
  readonly written: string[][] = [];
  readonly synced: boolean[] = [];
  readonly discarded: string[][] = [];
  private finish: Array<(error?: Error) => void> = [];
  create(): string[] {
    return [];
  }
  write(batch: string[], sync: boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      this.finish.push((error) => {
        if (error) reject(error);
        else {
          this.written.push(batch);
          this.synced.push(sync);
          resolve();
        }
      });
    });
  }
  discard(batch: string[]): void {
    this.discarded.push(batch);
  }
  get waiting(): number {
    return this.finish.length;
  }
  complete(error?: Error): void {
    this.finish.shift()!(error);
  }
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function commitOn(sink: ManualSink, pendingBytesMax = 1000, batchBytesMax = 1000): GroupCommit<string[]> {
  return new GroupCommit(sink, { pendingBytesMax, batchBytesMax, autoFlush: true, nowMs: () => 0 });
}

describe('GroupCommit', () => {
  it('puts the calls of one turn into one batch and the calls during its write into the next', async () => {
    const sink = new ManualSink();
    const commit = commitOn(sink);
    const first = [commit.submit(10, 1, (b) => b.push('a')), commit.submit(10, 2, (b) => b.push('b'))];
    await turn();
    expect(sink.waiting).toBe(1);
    const second = [commit.submit(10, 0, (b) => b.push('c')), commit.submit(10, 0, (b) => b.push('d'))];
    await turn();
    expect(sink.waiting).toBe(1); // the second batch waits for the first
    sink.complete();
    await Promise.all(first);
    await turn();
    expect(sink.waiting).toBe(1);
    sink.complete();
    await Promise.all(second);
    expect(sink.written).toEqual([['a', 'b'], ['c', 'd']]);
    expect(commit.stats.fsyncs).toBe(2);
    expect(commit.stats.entriesWritten).toBe(3);
    expect(commit.stats.batchCallsMax).toBe(2);
    expect(commit.pendingBytes).toBe(0);
  });

  it('starts a new batch once one holds batchBytesMax bytes', async () => {
    const sink = new ManualSink();
    const commit = commitOn(sink, 1000, 15);
    const all = ['a', 'b', 'c'].map((name) => commit.submit(10, 0, (b) => b.push(name)));
    await turn();
    sink.complete();
    await turn();
    sink.complete();
    await Promise.all(all);
    expect(sink.written).toEqual([['a', 'b'], ['c']]);
  });

  it('refuses calls past the pending bound with busy, and lets a lone large call in', () => {
    const sink = new ManualSink();
    const commit = commitOn(sink, 100, 100);
    expect(() => commit.admit(500)).not.toThrow();
    void commit.submit(60, 0, (b) => b.push('a'));
    expect(() => commit.admit(50)).toThrow(StorageError);
    expect(() => commit.admit(40)).not.toThrow();
  });

  it('after a failed write rejects that batch, the queued ones and every later call with io', async () => {
    const sink = new ManualSink();
    const commit = commitOn(sink);
    const first = commit.submit(10, 0, (b) => b.push('a'));
    await turn();
    const second = commit.submit(10, 0, (b) => b.push('b'));
    sink.complete(new Error('EIO'));
    const isIo = (error: unknown): boolean => isStorageError(error) && error.kind === 'io';
    await expect(first).rejects.toSatisfy(isIo);
    await expect(second).rejects.toSatisfy(isIo);
    expect(sink.discarded).toEqual([['b']]);
    expect(() => commit.admit(1)).toThrow(/batch write failed/);
    await expect(commit.barrier()).rejects.toSatisfy(isIo);
  });

  it('takes calls again after reset(), which refuses while writes are pending', async () => {
    const sink = new ManualSink();
    const commit = commitOn(sink);
    commit.reset(); // nothing failed: a no-op
    const lost = commit.submit(10, 0, (b) => b.push('a'));
    await turn();
    sink.complete(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }));
    await expect(lost).rejects.toThrow(/ENOSPC/);
    expect(commit.failed?.kind).toBe('io');
    commit.reset();
    expect(commit.failed).toBeNull();
    expect(() => commit.admit(1)).not.toThrow();
    const next = commit.submit(10, 0, (b) => b.push('b'));
    await turn();
    sink.complete();
    await next;
    expect(sink.written).toEqual([['b']]);
    expect(commit.pendingBytes).toBe(0);
  });

  it('abort drops what is not being written; barrier and flush follow the queue', async () => {
    const sink = new ManualSink();
    const commit = new GroupCommit(sink, { pendingBytesMax: 100, batchBytesMax: 100, autoFlush: false, nowMs: () => 0 });
    await commit.barrier();
    const lost = commit.submit(10, 0, (b) => b.push('lost'));
    commit.abort(new StorageError('crashed', 'test'));
    await expect(lost).rejects.toThrow(/test/);
    expect(commit.pendingCalls).toBe(0);
    const kept = commit.submit(10, 0, (b) => b.push('kept'));
    await turn();
    expect(sink.waiting).toBe(0); // no autoFlush: nothing is written until flush()
    const flushed = commit.flush();
    await turn();
    sink.complete();
    await Promise.all([kept, flushed]);
    expect(sink.written).toEqual([['kept']]);
  });

  it('a throwing fill leaves no batch behind', async () => {
    const sink = new ManualSink();
    const commit = commitOn(sink);
    expect(() =>
      commit.submit(10, 0, () => {
        throw new Error('bug');
      }),
    ).toThrow('bug');
    await commit.barrier();
    expect(commit.pendingCalls).toBe(0);
  });

  it('syncs a batch when any call needs it, and skips the fsync when none does', async () => {
    const sink = new ManualSink();
    const commit = commitOn(sink);
    const lazy = [commit.submit(10, 0, (b) => b.push('commit-1'), false), commit.submit(10, 0, (b) => b.push('commit-2'), false)];
    await turn();
    sink.complete();
    await Promise.all(lazy);
    const mixed = [commit.submit(10, 0, (b) => b.push('commit-3'), false), commit.submit(10, 1, (b) => b.push('entry'))];
    await turn();
    sink.complete();
    await Promise.all(mixed);
    expect(sink.synced).toEqual([false, true]);
    expect(commit.stats.fsyncs).toBe(1);
    expect(commit.stats.writesUnsynced).toBe(1);
    expect(commit.stats.callsWritten).toBe(4);
  });
});
