// Where a spool's replicas go: min(members, replicasMax) consecutive members in id order,
// starting at a position derived from the spool's name, so spools spread over the cluster and
// every proposer picks the same set for the same name and members.

/** Replicas a spool gets by default (the min(N, 3)). */
export const REPLICAS_PER_SPOOL_DEFAULT = 3;

/**
 * The members holding replicas of `spool`: min(members.length, replicasMax) distinct ids.
 * `members` non-empty, `replicasMax` >= 1; throws RangeError otherwise.
 */
export function placeReplicas(
  spool: string,
  members: readonly string[],
  replicasMax = REPLICAS_PER_SPOOL_DEFAULT,
): string[] {
  if (members.length === 0) throw new RangeError('placement: no members');
  if (!Number.isSafeInteger(replicasMax) || replicasMax < 1) {
    throw new RangeError('placement: replicasMax must be >= 1');
  }
  const sorted = [...new Set(members)].sort();
  const count = Math.min(sorted.length, replicasMax);
  const start = fnv1a(spool) % sorted.length;
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(sorted[(start + i) % sorted.length]!);
  return out;
}

/** 32-bit FNV-1a of the UTF-16 code units (names are ASCII). */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
