// The operator's log: one info line per thing an on-call person acts on — a group's leader (a
// spool's primary) moving or lost, an election that kept its leader, this member opening or
// closing a spool as primary, members joining or leaving the metadata group, spool replicas
// added to or removed from this member, a replica stopping on a storage failure. A pure diff of
// two Member.status() snapshots; the shell samples status on an interval (no member.ts hook).

import type { MemberStatus } from '@mq/member';
import type { Logger } from './logger.js';

/** How often the shell compares status snapshots (an event is logged at most this late). */
export const OPERATOR_LOG_INTERVAL_MS = 1_000;

export interface OperatorEvent {
  readonly level: 'info' | 'warn' | 'error';
  /** Fields to act on; `event` names the kind. */
  readonly fields: Readonly<Record<string, string | number | boolean | null | readonly string[]>>;
  readonly message: string;
}

interface GroupView {
  readonly group: string;
  /** The spool of a spool group; null for the metadata group. */
  readonly spool: string | null;
  readonly role: string;
  readonly term: number;
  readonly leaderId: string | null;
  readonly serving: boolean;
  readonly failure: string | null;
}

function groupsOf(status: MemberStatus): Map<string, GroupView> {
  const out = new Map<string, GroupView>();
  const meta = status.meta;
  out.set(meta.group, { ...meta, spool: null, serving: false, failure: null });
  for (const s of status.spools) {
    out.set(s.group, { ...s, spool: s.spool, serving: s.serving, failure: s.failure });
  }
  return out;
}

function what(g: GroupView): string {
  return g.spool === null ? 'metadata group' : `spool ${g.spool}`;
}

function leaderEvents(member: string, before: GroupView, after: GroupView): OperatorEvent[] {
  const base = { member, group: after.group, spool: after.spool, term: after.term, role: after.role };
  const leader = after.spool === null ? 'leader' : 'primary';
  if (before.leaderId !== after.leaderId) {
    if (after.leaderId === null) {
      return [{ level: 'warn', fields: { event: 'leader_lost', ...base, from: before.leaderId },
        message: `${what(after)} lost its ${leader} ${before.leaderId ?? ''} (term ${after.term}); election under way` }];
    }
    return [{ level: 'info',
      fields: { event: 'leader_changed', ...base, from: before.leaderId, to: after.leaderId },
      message: `${what(after)} ${leader} is now ${after.leaderId} (was ${before.leaderId ?? 'none'}, term ${after.term})` }];
  }
  if (after.term > before.term && after.leaderId !== null) {
    return [{ level: 'info', fields: { event: 'election', ...base, leader: after.leaderId,
      previousTerm: before.term },
      message: `${what(after)} held an election: ${after.leaderId} stays ${leader} (term ${after.term})` }];
  }
  return [];
}

function localEvents(member: string, before: GroupView, after: GroupView): OperatorEvent[] {
  const out: OperatorEvent[] = [];
  if (before.serving !== after.serving && after.spool !== null) {
    out.push({ level: 'info', fields: { event: after.serving ? 'primary_opened' : 'primary_closed',
      member, spool: after.spool, group: after.group, term: after.term },
      message: `${member} ${after.serving ? 'opened' : 'closed'} spool ${after.spool} as primary` });
  }
  if (before.failure === null && after.failure !== null) {
    out.push({ level: 'error', fields: { event: 'replica_failed', member, spool: after.spool,
      group: after.group, reason: after.failure },
      message: `replica of ${what(after)} on ${member} stopped: ${after.failure}` });
  }
  return out;
}

function membershipEvents(before: MemberStatus, after: MemberStatus): OperatorEvent[] {
  const out: OperatorEvent[] = [];
  const was = new Set([...before.meta.config.voters, ...before.meta.config.learners]);
  const now = new Set([...after.meta.config.voters, ...after.meta.config.learners]);
  const voters = after.meta.config.voters;
  for (const id of now) {
    if (was.has(id)) continue;
    out.push({ level: 'info', fields: { event: 'member_joined', member: after.id, joined: id, voters },
      message: `member ${id} joined the cluster (voters ${voters.join(', ')})` });
  }
  for (const id of was) {
    if (now.has(id)) continue;
    out.push({ level: 'info', fields: { event: 'member_left', member: after.id, left: id, voters },
      message: `member ${id} left the cluster (voters ${voters.join(', ')})` });
  }
  return out;
}

/** What changed from `before` to `after` (two snapshots of one member), in a stable order. */
export function operatorEvents(before: MemberStatus, after: MemberStatus): OperatorEvent[] {
  const out = membershipEvents(before, after);
  const was = groupsOf(before);
  const now = groupsOf(after);
  for (const [group, g] of now) {
    const old = was.get(group);
    if (old === undefined) {
      out.push({ level: 'info', fields: { event: 'replica_added', member: after.id,
        spool: g.spool, group }, message: `${after.id} now holds a replica of ${what(g)}` });
      continue;
    }
    out.push(...leaderEvents(after.id, old, g), ...localEvents(after.id, old, g));
  }
  for (const [group, g] of was) {
    if (now.has(group)) continue;
    out.push({ level: 'info', fields: { event: 'replica_removed', member: after.id,
      spool: g.spool, group }, message: `${after.id} no longer holds a replica of ${what(g)}` });
  }
  return out;
}

/**
 * Logs `operatorEvents` of `status()` every OPERATOR_LOG_INTERVAL_MS to `logger` (child with
 * `log: operator`). The first snapshot is the baseline. Returns the stop function.
 */
export function startOperatorLog(status: () => MemberStatus, logger: Logger): () => void {
  const log = logger.child({ log: 'operator' });
  let last = status();
  const timer = setInterval(() => {
    const next = status();
    for (const event of operatorEvents(last, next)) log[event.level](event.fields, event.message);
    last = next;
  }, OPERATOR_LOG_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
