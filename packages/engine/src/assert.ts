// Invariant checks. A failed assertion is a bug in the engine (or in its caller breaking a
// documented precondition), never an operating error: it throws loudly instead of returning a
// value.
// Messages are constant strings so a passing check costs one branch on the hot path.

export class AssertionError extends Error {
  constructor(message: string) {
    super(`engine: assertion failed: ${message}`);
    this.name = 'AssertionError';
  }
}

/** Throws `AssertionError` when `condition` is falsy. `message` should be a constant string. */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionError(message);
}
