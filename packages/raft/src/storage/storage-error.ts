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
  /**
   * Stored data of a format this version does not know (written by a newer one): never
   * misread and never dropped; the group stays down until a version that knows it runs.
   */
  | 'format'
  /**
   * A write or fsync failed (ENOSPC, EIO). The engine refuses every later call until it is
   * reopened (StorageEngine.reopen), which re-reads what the medium holds.
   */
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

/**
 * Whether `error` is a failure of the medium a group can recover from by re-reading its storage
 * (a write refused `io`, or `busy` backpressure), as opposed to a bug, a closed engine or
 * corrupt records (which a re-read would find again).
 */
export function isRecoverableStorageError(error: unknown): error is StorageError {
  return isStorageError(error) && (error.kind === 'io' || error.kind === 'busy');
}

/**
 * A rejection of a storage call, with errors of the file system (a snapshot file's ENOSPC or
 * EIO: a Node error with an errno `code`) turned into `io` with the original as their cause.
 * Anything else (a StorageError, a failed assertion: a bug) is returned as it is.
 */
export function asStorageError(error: unknown): unknown {
  if (isStorageError(error) || !(error instanceof Error)) return error;
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code !== 'string' || !code.startsWith('E')) return error;
  return new StorageError('io', error.message, { cause: error });
}
