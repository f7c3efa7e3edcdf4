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

/**
 * The member to take over `from`'s replica of `spool`, or null when every other member holds a
 * replica already. `hosting` counts the replicas each member hosts (its load); the least loaded
 * candidate wins, ties broken by a hash of spool and member so equal members share the moves.
 * Candidates: `members` minus `replicas` minus `excluded` (a member on its way out).
 */
export function pickReplacement(
  spool: string,
  replicas: readonly string[],
  members: readonly string[],
  hosting: ReadonlyMap<string, number>,
  excluded: ReadonlySet<string> = new Set(),
): string | null {
  let best: { id: string; load: number; hash: number } | null = null;
  for (const id of [...new Set(members)].sort()) {
    if (replicas.includes(id) || excluded.has(id)) continue;
    const candidate = { id, load: hosting.get(id) ?? 0, hash: fnv1a(`${spool}/${id}`) };
    if (best === null || candidate.load < best.load) best = candidate;
    else if (candidate.load === best.load && candidate.hash < best.hash) best = candidate;
  }
  return best?.id ?? null;
}
