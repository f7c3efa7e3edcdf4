// Invariant checks for the pure core. A failed assertion is a bug: it throws loudly instead of
// letting a replica continue with state that could lose an acknowledged write. The core may not
// import node:assert (no node:* imports in pure code), hence this small helper.

/** Thrown when an invariant of the Raft core does not hold. Never an expected operating error. */
export class RaftAssertionError extends Error {
  constructor(message: string) {
    super(`raft: assertion failed: ${message}`);
    this.name = 'RaftAssertionError';
  }
}

/** Throws `RaftAssertionError` with `message` unless `condition` holds. */
export function assert(condition: boolean, message: string): asserts condition {
  if (!condition) throw new RaftAssertionError(message);
}

/**
 * `value`, which an invariant says is there (an index in range, a key present): states the
 * invariant and fails loudly where a `!` would let `undefined` through. Give a constant
 * `message`, so a hot path allocates nothing.
 */
export function defined<T>(value: T | undefined, message: string): T {
  if (value === undefined) throw new RaftAssertionError(message);
  return value;
}
