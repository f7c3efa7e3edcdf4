// Options are passed on only when given: with exactOptionalPropertyTypes an absent option must be
// left out, never set to undefined, so the receiver's default applies.

/** The entries of `source` named in `keys` whose value is not undefined. */
export function given<T extends object, K extends keyof T>(
  source: T,
  keys: readonly K[],
): { [P in K]?: Exclude<T[P], undefined> } {
  const out: { [P in K]?: Exclude<T[P], undefined> } = {};
  for (const key of keys) {
    const value = source[key];
    if (value !== undefined) out[key] = value as Exclude<T[K], undefined>;
  }
  return out;
}
