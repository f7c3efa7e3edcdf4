// A member's graceful hand-off before it stops ("lame duck"): every Raft group it leads (the
// metadata and its spools) is handed to an up-to-date peer, all at once, within one bound. A
// spool replica first stops serving and logs its leases (SpoolReplica.handOff), so the next
// primary takes them over; the metadata group only moves. A group whose transfer fails is tried
// with the next candidate while time remains; whatever is left when the bound runs out is left
// to an ordinary election once the member stops (a spool's lease record, if committed, still
// applies then: nobody served after it).
//
// Waiting runs on the cluster clock (MemberOptions.clusterClock, by default the monotonic one
// Raft ticks on): a transfer completes in Raft's time, whatever clock the spool hosts run on.

import { type Clock, monotonicClock } from '@spoolmq/protocol';

/** How long a member waits for its groups to move before stopping anyway (ms). */
export const HAND_OFF_TIMEOUT_MS_DEFAULT = 10_000;

/** The part of RaftNode a hand-off reads. */
export interface HandOffNode {
  isLeader(): boolean;
  leaderId(): string | null;
  status(): {
    readonly config: { readonly voters: readonly string[] };
    readonly progress: Readonly<Record<string, HeirProgress>>;
  };
}

/** The leader's view of a follower, as far as choosing an heir goes. */
export interface HeirProgress {
  readonly match: number;
  readonly state: string;
  readonly recentActive: boolean;
}

/** One group this member may lead. */
export interface HandOffGroup {
  readonly group: string;
  readonly node: HandOffNode;
  /** Hands the group's leadership to `to`; resolves once `to` leads. */
  handOver(to: string): Promise<void>;
}

export interface GroupHandOff {
  readonly group: string;
  /** Where the leadership went (the known leader after the hand-off), or null. */
  readonly to: string | null;
  /** True when this member no longer leads the group. */
  readonly moved: boolean;
  /** Why the last attempt failed, when it did. */
  readonly error?: string;
}

export interface HandOffReport {
  /** Groups this member led when the hand-off began. */
  readonly groups: readonly GroupHandOff[];
  /** Every one of them moved. */
  readonly complete: boolean;
  readonly elapsedMs: number;
}

/**
 * Hands every group in `groups` that `selfId` leads to a peer, within `timeoutMs` in all on
 * `clock`. Never rejects: failures are in the report.
 */
export async function handOffGroups(
  selfId: string,
  groups: readonly HandOffGroup[],
  timeoutMs: number = HAND_OFF_TIMEOUT_MS_DEFAULT,
  clock: Clock = monotonicClock,
): Promise<HandOffReport> {
  const startMs = clock.nowMs();
  const bound = { clock, deadlineMs: startMs + Math.max(0, timeoutMs) };
  const led = groups.filter((group) => group.node.isLeader());
  const load = new Map<string, number>();
  const results = await Promise.all(led.map((group) => handOne(selfId, group, bound, load)));
  return {
    groups: results,
    complete: results.every((result) => result.moved),
    elapsedMs: clock.nowMs() - startMs,
  };
}

/** The hand-off's end: `deadlineMs` on `clock`. */
interface Bound {
  readonly clock: Clock;
  readonly deadlineMs: number;
}

async function handOne(
  selfId: string,
  group: HandOffGroup,
  bound: Bound,
  load: Map<string, number>,
): Promise<GroupHandOff> {
  const tried = new Set<string>();
  let error: string | undefined;
  while (group.node.isLeader() && bound.clock.nowMs() < bound.deadlineMs) {
    const heir = chooseHeir(selfId, group.node, load, tried);
    if (heir === null) {
      error = 'no up-to-date peer to hand over to';
      break;
    }
    tried.add(heir);
    load.set(heir, (load.get(heir) ?? 0) + 1);
    try {
      await withDeadline(group.handOver(heir), bound);
      error = undefined;
    } catch (caught) {
      error = caught instanceof Error ? caught.message : String(caught);
      // A timer may fire a little before the clock passes the deadline: stop here.
      if (caught === BOUND_REACHED) break;
    }
  }
  const moved = !group.node.isLeader();
  const to = moved ? group.node.leaderId() : null;
  if (!moved && error === undefined) error = 'hand-off bound reached';
  return { group: group.group, to, moved, ...(moved || error === undefined ? {} : { error }) };
}

/**
 * The voter to hand `node`'s group to: among the other voters heard from recently, replicating
 * normally (Raft brings the heir fully up to date before it lets it campaign) and not yet tried,
 * the one given the fewest groups in this hand-off (spreading the primaries), then the one with
 * the most of the log, then by id. Null when there is none.
 */
export function chooseHeir(
  selfId: string,
  node: HandOffNode,
  load: ReadonlyMap<string, number>,
  tried: ReadonlySet<string>,
): string | null {
  const { config, progress } = node.status();
  let best: { id: string; match: number; load: number } | null = null;
  for (const id of config.voters) {
    const view = progress[id];
    if (id === selfId || tried.has(id) || view === undefined) continue;
    if (!view.recentActive || view.state !== 'replicate') continue;
    const candidate = { id, match: view.match, load: load.get(id) ?? 0 };
    if (best === null || better(candidate, best)) best = candidate;
  }
  return best?.id ?? null;
}

function better(
  a: { id: string; match: number; load: number },
  b: { id: string; match: number; load: number },
): boolean {
  if (a.load !== b.load) return a.load < b.load;
  if (a.match !== b.match) return a.match > b.match;
  return a.id < b.id;
}

const BOUND_REACHED = new Error('hand-off bound reached');

/** `promise`, or a rejection with BOUND_REACHED once the bound's deadline passes. */
function withDeadline<T>(promise: Promise<T>, bound: Bound): Promise<T> {
  const { clock, deadlineMs } = bound;
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimer(
      () => reject(BOUND_REACHED),
      Math.max(0, deadlineMs - clock.nowMs()),
    );
    promise.then(
      (value) => {
        clock.clearTimer(timer);
        resolve(value);
      },
      (error: unknown) => {
        clock.clearTimer(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
