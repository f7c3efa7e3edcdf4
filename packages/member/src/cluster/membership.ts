// Changes of who is a member and where replicas live: adding a member (its address recorded,
// then a metadata voter), removing one (its replicas moved to the least loaded members it does
// not reach for, then it leaves the metadata group), and moving one replica of a spool. The
// steps that must run on the metadata's leader (`...Here`) are forwarded there as admin steps;
// every step is recorded in the metadata or derived from it, so a re-run after a failure
// finishes the job. Waits are on the metadata's applies (node-wait.ts), not polls.

import { MqError } from '@spoolmq/engine';
import type { AdminAnswers, AdminOp, AdminStep, AdminStepOf } from '@spoolmq/protocol';
import { metaError, unavailable } from './cluster-errors.js';
import { type MetaCommand, type MetaResult, accountSpool } from './meta-commands.js';
import type { MetaReplica } from './meta-replica.js';
import { type PlacedSpool, hostsReplica } from './meta-state.js';
import { type WaitHost, untilApplied } from './node-wait.js';
import { pickReplacement } from './placement.js';

/** Longest a removal waits for the member to be gone from the metadata applied here. */
export const MEMBER_GONE_WAIT_MS = 2_000;
/** Longest a metadata leader waits for its lease before it changes the configuration. */
export const LEADER_LEASE_WAIT_MS = 2_000;
/**
 * Longest a replica move or a member removal waits for its moves (they go on afterwards: a
 * re-run waits again).
 */
export const MOVE_WAIT_MS = 120_000;
/** Rounds of moves a removal makes (a spool placed on the member meanwhile needs another). */
const REMOVE_ROUNDS_MAX = 3;
/** Spools a refusal names. */
const NAMED_SPOOLS_MAX = 10;
const MEMBER_ID = /^[A-Za-z0-9_.-]{1,64}$/;
const ADDRESS = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):[0-9]{1,5}$/;

/** What membership changes need of their member. */
export interface MembershipHost extends WaitHost {
  /** The metadata replica. */
  meta(): MetaReplica;
  /** Runs `step` on member `id` (here when it is this member). Rejects with MqError. */
  callOn<O extends AdminOp>(id: string, step: AdminStepOf<O>): Promise<AdminAnswers[O]>;
  /** Proposes `command` on the metadata leader; resolves its result. Rejects with MqError. */
  proposeOnLeader(command: MetaCommand): Promise<MetaResult>;
}

export class Membership {
  constructor(private readonly host: MembershipHost) {}

  /**
   * Adds member `id`, reachable at `address`, to the cluster (run on the metadata leader). Throws
   * 400 for a malformed id or address, 503 when the metadata has no leader or the new member does
   * not catch up.
   */
  async add(id: string, address: string): Promise<void> {
    if (!MEMBER_ID.test(id)) throw invalid('id', `member id must match ${MEMBER_ID.source}`);
    if (!ADDRESS.test(address)) throw invalid('address', 'address must be host:port');
    await this.onMetaLeader({ op: 'addMember', id, address });
  }

  /**
   * Moves `from`'s replica of spool `spool` of `accountId` to member `to` and waits (at most
   * MOVE_WAIT_MS) until it is done; done already is fine. Throws 404 for an unknown spool or
   * member, 400 when `from` holds no replica or `to` holds one, 503 when time runs out.
   */
  async moveReplica(accountId: string, spool: string, from: string, to: string): Promise<void> {
    const name = accountSpool(accountId, spool);
    const state = this.host.meta().state;
    const record = state.spools.get(name);
    if (record === undefined) throw noSpool(accountId, spool);
    if (!state.members.includes(to)) throw new MqError('not_found', `member ${to}: not found`);
    const moved = (r: PlacedSpool): boolean =>
      r.moving === null && r.replicas.includes(to) && !r.replicas.includes(from);
    if (!moved(record)) {
      if (!record.replicas.includes(from)) {
        const holders = record.replicas.join(', ');
        throw invalid('from', `member ${from} holds no replica of the spool (${holders})`);
      }
      if (record.replicas.includes(to)) {
        throw invalid('to', `member ${to} holds a replica of the spool already`);
      }
      await this.startMove(name, from, to);
      await this.movesDone([name], moved);
    }
  }

  /**
   * Moves every replica off member `id` (to the least loaded member without one; with
   * `allowShrink`, a spool with no such member loses the replica instead), then takes `id` out of
   * the metadata group. Every step is recorded or derived from the metadata, so a re-run after a
   * failure finishes the job.
   */
  async remove(id: string, options: { readonly allowShrink?: boolean } = {}): Promise<void> {
    if (!this.host.meta().state.members.includes(id)) {
      throw new MqError('not_found', `member ${id}: not found`);
    }
    for (let round = 1; ; round++) {
      const holding = this.spoolsOn(id);
      if (holding.length === 0) break;
      if (round > REMOVE_ROUNDS_MAX) {
        const what = `member ${id} still holds replicas of ${names(holding)}`;
        throw unavailable(`${what}; run the removal again`);
      }
      await this.onMetaLeader({ op: 'moveOff', id, allowShrink: options.allowShrink === true });
      await this.movesDone(holding.map((spool) => spool.name), (spool) => !hostsReplica(spool, id));
    }
    await this.onMetaLeader({ op: 'removeMember', id });
    // Answered with the shape the metadata has now, the member gone (as applied here too).
    const gone = (): boolean => !this.host.meta().state.members.includes(id);
    await untilApplied(this.host, this.host.meta().node, gone, MEMBER_GONE_WAIT_MS);
  }

  /**
   * On the metadata leader: records the moves taking member `id`'s replicas elsewhere. The leader
   * picks the new members among those it hears from, so no move waits on a member that is down.
   */
  async moveOffHere(id: string, allowShrink: boolean): Promise<void> {
    const meta = this.host.meta();
    if (!meta.node.isLeader()) throw notMetaLeader();
    const status = meta.node.status();
    const unreachable = new Set([id]);
    for (const [peer, progress] of Object.entries(status.progress)) {
      if (peer !== this.host.id && !progress.recentActive) unreachable.add(peer);
    }
    const moves = this.movesOff(id, this.spoolsOn(id), allowShrink, unreachable);
    for (const move of moves) await this.startMove(move.spool, id, move.to);
  }

  /** Spools with a replica on member `id` (joining ones included). */
  private spoolsOn(id: string): PlacedSpool[] {
    return [...this.host.meta().state.spools.values()].filter((spool) => hostsReplica(spool, id));
  }

  /**
   * The moves taking `id`'s replicas of `holding` elsewhere (spools whose move runs already wait
   * for it). Throws 409 conflict, before anything moves, when some spool has no member to go to
   * and shrinking is not allowed, or when `id` holds its only replica.
   */
  private movesOff(
    id: string,
    holding: readonly PlacedSpool[],
    allowShrink: boolean,
    excluded: ReadonlySet<string>,
  ): { spool: string; to: string }[] {
    const state = this.host.meta().state;
    const hosting = new Map<string, number>();
    for (const spool of state.spools.values()) {
      for (const member of [...spool.replicas, spool.moving?.to ?? '']) {
        if (member !== '') hosting.set(member, (hosting.get(member) ?? 0) + 1);
      }
    }
    const moves: { spool: string; to: string }[] = [];
    const stuck: PlacedSpool[] = [];
    for (const spool of holding) {
      if (spool.moving !== null) continue;
      const to = pickReplacement(spool.name, spool.replicas, state.members, hosting, excluded);
      if (to === null && (!allowShrink || spool.replicas.length < 2)) stuck.push(spool);
      if (to !== null) hosting.set(to, (hosting.get(to) ?? 0) + 1);
      moves.push({ spool: spool.name, to: to ?? '' });
    }
    if (stuck.length > 0) {
      const why = allowShrink
        ? `member ${id} holds the only replica of ${names(stuck)}`
        : `no reachable member without a replica can take ${id}'s replicas of ${names(stuck)}; ` +
          'add a member, or allow the replica sets to shrink (--allow-shrink)';
      throw new MqError('conflict', why, { spools: stuck.length });
    }
    return moves;
  }

  /** Records the move of `from`'s replica of `spool` to `to` ('' shrinks); a re-run is fine. */
  private async startMove(spool: string, from: string, to: string): Promise<void> {
    const result = await this.host.proposeOnLeader({ type: 'moveReplica', spool, from, to });
    if (result.kind === 'exists') return;
    const error = metaError(result, `spool ${spool}`);
    if (error !== null) throw error;
  }

  /**
   * Waits (at most MOVE_WAIT_MS) until each of `spools` is gone or `done` holds for it in this
   * member's metadata. Throws 503 unavailable when time runs out (the moves go on).
   */
  private async movesDone(
    spools: readonly string[],
    done: (spool: PlacedSpool) => boolean,
  ): Promise<void> {
    const pending = (): PlacedSpool[] =>
      spools.flatMap((name) => {
        const spool = this.host.meta().state.spools.get(name);
        return spool === undefined || done(spool) ? [] : [spool];
      });
    const meta = this.host.meta();
    if (!(await untilApplied(this.host, meta.node, () => pending().length === 0, MOVE_WAIT_MS))) {
      const what = `replica moves of ${names(pending())} are still running`;
      throw unavailable(`${what}; run the command again to wait`);
    }
  }

  /** Runs a membership step on the metadata leader (here, or forwarded there). */
  private async onMetaLeader(step: AdminStep): Promise<void> {
    const leader = this.host.meta().node.leaderId();
    if (leader === null) throw unavailable('the metadata group has no leader now; retry');
    await this.host.callOn(leader, step);
  }

  /** addMember on the metadata leader: record the address everywhere, then add the voter. */
  async addHere(id: string, address: string): Promise<void> {
    const meta = this.host.meta();
    if (!meta.node.isLeader()) throw notMetaLeader();
    const result = await meta.propose({ type: 'addMember', id, address });
    // `exists`: added before (perhaps the voter step failed then): the voter step is retried.
    if (result.kind !== 'ok' && result.kind !== 'exists') throw metaError(result, `member ${id}`)!;
    if (meta.node.status().config.voters.includes(id)) return;
    try {
      await meta.node.addVoter(id);
    } catch (error) {
      const why = `member ${id} did not catch up as a voter (started with --join?)`;
      throw unavailable(`${why}: ${String(error)}`);
    }
  }

  /**
   * removeMember on the metadata leader: the voter goes first, then the record. A leader removing
   * itself hands the metadata's leadership to another voter, which carries on.
   */
  async removeHere(id: string): Promise<void> {
    const meta = this.host.meta();
    if (!meta.node.isLeader()) throw notMetaLeader();
    if (id === this.host.id) {
      const heir = meta.node.status().config.voters.find((voter) => voter !== id);
      if (heir === undefined) {
        throw new MqError('conflict', `member ${id} is the metadata's only voter`);
      }
      try {
        await meta.node.transferLeadership(heir);
      } catch (error) {
        const why = `handing the metadata's leadership to ${heir} failed`;
        throw unavailable(`${why}: ${String(error)}; retry`);
      }
      await this.host.callOn(heir, { op: 'removeMember', id });
      return;
    }
    // A leader changes the configuration only once it has committed an entry of its term (it
    // may have just taken over, from the member being removed for instance).
    const leading = (): boolean => meta.node.hasLeaderLease() || !meta.node.isLeader();
    await untilApplied(this.host, meta.node, leading, LEADER_LEASE_WAIT_MS);
    try {
      await meta.node.removeMember(id);
    } catch (error) {
      throw unavailable(`removing ${id} from the metadata group failed: ${String(error)}`);
    }
    const error = metaError(await meta.propose({ type: 'removeMember', id }), `member ${id}`);
    if (error !== null) throw error;
  }
}

function invalid(field: string, message: string): MqError {
  return new MqError('invalid_argument', message, { field });
}

/** 404: spool `spool` of account `accountId` does not exist. */
export function noSpool(accountId: string, spool: string): MqError {
  return new MqError('not_found', `spool ${spool} of ${accountId}: not found`);
}

function notMetaLeader(): MqError {
  return unavailable('this member does not lead the metadata now; retry');
}

/** The first spools' names, for a message. */
function names(spools: readonly PlacedSpool[]): string {
  const shown = spools.slice(0, NAMED_SPOOLS_MAX).map((spool) => spool.name).join(', ');
  return spools.length > NAMED_SPOOLS_MAX ? `${shown}, ... (${spools.length} spools)` : shown;
}
