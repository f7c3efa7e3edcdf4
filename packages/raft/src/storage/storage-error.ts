// Expected failures of Raft storage, as values with a stable kind. The Raft package does not
// depend on the queue engine, so these are not MqErrors; the member maps them (a storage failure
// is an `internal`/`unavailable` condition for the API, never something a client caused).

export type StorageErrorKind =
  /** The engine (or this handle) was closed; nothing more is written through it. */
  | 'closed'
  /** The memory engine's crash hook dropped this call before it became durable. */
  | 'crashed'
  /** More than `pendingBytesMax` bytes are waiting to be written; the call had no effect. */
  | 'busy'
  /** A record that cannot be dropped safely (hard state, snapshot) failed its checksum. */
  | 'corrupt'
  /** A write or fsync failed. The engine refuses every later call: restart the process. */
  | 'io';

export class StorageError extends Error {
  constructor(
    readonly kind: StorageErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`raft storage: ${message}`, options);
    this.name = 'StorageError';
  }
}

export function isStorageError(value: unknown): value is StorageError {
  return value instanceof StorageError;
}
