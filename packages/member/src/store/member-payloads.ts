// The payload stores of a member's spool replicas: segment stores under the member's data
// directory (`payloads/<group>`), sharing one payload cache; or, for a member whose Raft storage
// is in memory (tests), memory stores that live as long as that storage object, so a member
// restarted on the same storage finds its payloads as it finds its log.

import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { StorageEngine } from '@spoolmq/raft';
import { PayloadCache } from './payload-cache.js';
import { MemoryReplicaPayloads, type ReplicaPayloadStore } from './replica-payloads.js';
import { SegmentStore, type SegmentStoreOptions } from './segment-store.js';

const memoryStores = new WeakMap<StorageEngine, Map<string, MemoryReplicaPayloads>>();

export interface MemberPayloadsOptions {
  /** The member's data directory; null keeps payloads in memory beside `storage`. */
  readonly dataDir: string | null;
  readonly storage: StorageEngine;
  /** Payload cache budget of the member, bytes. */
  readonly cacheBytes?: number;
  /** Segment size, bytes (default 64 MiB). */
  readonly segmentBytesMax?: number;
  /** The segment stores' gathered write (default fs.writevSync; tests inject faults). */
  readonly writev?: SegmentStoreOptions['writev'];
}

export class MemberPayloads {
  readonly cache: PayloadCache;

  constructor(private readonly options: MemberPayloadsOptions) {
    this.cache = new PayloadCache(options.cacheBytes);
  }

  /** Opens the store of `group`. Throws what SegmentStore.open throws. */
  open(group: string): ReplicaPayloadStore {
    const { dataDir, segmentBytesMax, writev } = this.options;
    if (dataDir !== null) {
      return SegmentStore.open({
        dir: this.dirOf(dataDir, group),
        cache: this.cache,
        ...(segmentBytesMax === undefined ? {} : { segmentBytesMax }),
        ...(writev === undefined ? {} : { writev }),
      });
    }
    const stores = this.memoryStores();
    let store = stores.get(group);
    if (store === undefined) {
      store = new MemoryReplicaPayloads(`memory-${randomBytes(8).toString('hex')}`);
      stores.set(group, store);
    }
    return store;
  }

  /** Removes everything stored for `group` (its replica is closed). */
  async destroy(group: string): Promise<void> {
    const dataDir = this.options.dataDir;
    if (dataDir === null) {
      this.memoryStores().delete(group);
      return;
    }
    await rm(this.dirOf(dataDir, group), { recursive: true, force: true });
  }

  private memoryStores(): Map<string, MemoryReplicaPayloads> {
    let stores = memoryStores.get(this.options.storage);
    if (stores === undefined) {
      stores = new Map();
      memoryStores.set(this.options.storage, stores);
    }
    return stores;
  }

  private dirOf(dataDir: string, group: string): string {
    // Group ids are `spool:<name>#<gen>`: every character but `#` and `:` is file-name safe.
    return join(dataDir, 'payloads', encodeURIComponent(group));
  }
}
