// The operator's log: one info line per thing an on-call person acts on — a group's leader (a
// spool's primary) moving or lost, an election that kept its leader, this member opening or
// closing a spool as primary, members joining or leaving the metadata group, spool replicas
// added to or removed from this member, a replica stopping on a storage failure, a new primary
// lacking payloads handing its leadership on instead of opening, the disk alarm
// raised or cleared (growth refused with 507 storage_full meanwhile). A pure diff of
// two Member.status() snapshots; the shell samples status on an interval (no member.ts hook).

import type { MemberStatus } from '@spoolmq/member';
import type { Logger } from './logger.js';
import { memoryEvents } from './memory-options.js';
import type { OperatorEvent } from './operator-event.js';

export type { OperatorEvent } from './operator-event.js';

/** How often the shell compares status snapshots (an event is logged at most this late). */
export const OPERATOR_LOG_INTERVAL_MS = 1_000;


interface GroupView {
  readonly group: string;
  /** The spool of a spool group; null for the metadata group. */
  readonly spool: string | null;
  readonly role: string;
  readonly term: number;
  readonly leaderId: string | null;
  readonly serving: boolean;
  readonly failure: string | null;
  /** Leaderships handed on for lacking payloads, and the payloads missing now. */
  readonly lackingHandOffs: number;
  readonly payloadsMissing: number;
}

function groupsOf(status: MemberStatus): Map<string, GroupView> {
  const out = new Map<string, GroupView>();
  const meta = status.meta;
  const none = { serving: false, failure: null, lackingHandOffs: 0, payloadsMissing: 0 };
  out.set(meta.group, { ...meta, spool: null, ...none });
  for (const s of status.spools) {
    out.set(s.group, { ...s, spool: s.spool, serving: s.serving, failure: s.failure });
  }
  return out;
}

function what(g: GroupView): string {
  return g.spool === null ? 'metadata group' : `spool ${g.spool}`;
}

function event(
  level: OperatorEvent['level'],
  fields: OperatorEvent['fields'],
  message: string,
): OperatorEvent {
  return { level, fields, message };
}

function leaderEvents(member: string, before: GroupView, after: GroupView): OperatorEvent[] {
  const { group, spool, term, role } = after;
  const base = { member, group, spool, term, role };
  const leader = spool === null ? 'leader' : 'primary';
  const from = before.leaderId;
  if (from !== after.leaderId) {
    if (after.leaderId === null) {
      const message = `${what(after)} lost its ${leader} ${from ?? ''} (term ${term})`;
      return [event('warn', { event: 'leader_lost', ...base, from }, message)];
    }
    const to = after.leaderId;
    const message = `${what(after)} ${leader} is now ${to} (was ${from ?? 'none'}, term ${term})`;
    return [event('info', { event: 'leader_changed', ...base, from, to }, message)];
  }
  if (term > before.term && after.leaderId !== null) {
    const stays = after.leaderId;
    const fields = { event: 'election', ...base, leader: stays, previousTerm: before.term };
    const message = `${what(after)} held an election: ${stays} stays ${leader} (term ${term})`;
    return [event('info', fields, message)];
  }
  return [];
}

function localEvents(member: string, before: GroupView, after: GroupView): OperatorEvent[] {
  const out: OperatorEvent[] = [];
  const { group, spool, term } = after;
  if (before.serving !== after.serving && spool !== null) {
    const kind = after.serving ? 'primary_opened' : 'primary_closed';
    const verb = after.serving ? 'opened' : 'closed';
    const message = `${member} ${verb} spool ${spool} as primary`;
    out.push(event('info', { event: kind, member, spool, group, term }, message));
  }
  if (before.failure === null && after.failure !== null) {
    const reason = after.failure;
    const message = `replica of ${what(after)} on ${member} stopped: ${reason}`;
    out.push(event('error', { event: 'replica_failed', member, spool, group, reason }, message));
  }
  if (after.lackingHandOffs > before.lackingHandOffs && spool !== null) {
    const missing = after.payloadsMissing;
    const fields = { event: 'lacking_hand_off', member, spool, group, term, missing };
    const message = `${member} was elected for spool ${spool} lacking ${missing} payloads and `
      + 'handed the leadership to an up-to-date replica instead of opening';
    out.push(event('warn', fields, message));
  }
  return out;
}

function membershipEvents(before: MemberStatus, after: MemberStatus): OperatorEvent[] {
  const out: OperatorEvent[] = [];
  const was = new Set([...before.meta.config.voters, ...before.meta.config.learners]);
  const now = new Set([...after.meta.config.voters, ...after.meta.config.learners]);
  const voters = after.meta.config.voters;
  const member = after.id;
  for (const id of now) {
    if (was.has(id)) continue;
    const message = `member ${id} joined the cluster (voters ${voters.join(', ')})`;
    out.push(event('info', { event: 'member_joined', member, joined: id, voters }, message));
  }
  for (const id of was) {
    if (now.has(id)) continue;
    const message = `member ${id} left the cluster (voters ${voters.join(', ')})`;
    out.push(event('info', { event: 'member_left', member, left: id, voters }, message));
  }
  return out;
}

/**
 * The disk alarm's changes. `raisedTotal` also catches an alarm raised and cleared between two
 * samples, which the alarm flag alone would miss.
 */
function diskEvents(before: MemberStatus, after: MemberStatus): OperatorEvent[] {
  const was = before.disk ?? null;
  const now = after.disk ?? null;
  if (now === null) return [];
  const member = after.id;
  const raised = now.raisedTotal - (was?.raisedTotal ?? 0);
  const fields = {
    member,
    freeBytes: now.freeBytes,
    reserveBytes: now.reserveBytes,
    clearBytes: now.clearBytes,
  };
  const out: OperatorEvent[] = [];
  if (raised > 0) {
    const message =
      `disk alarm on ${member}: ${now.freeBytes ?? '?'} bytes free, below the reserve of ` +
      `${now.reserveBytes ?? '?'}; sends and queue creation answer 507 storage_full`;
    out.push(event('warn', { event: 'disk_alarm_raised', ...fields }, message));
  }
  if (!now.alarm && (raised > 0 || was?.alarm === true)) {
    const message = `disk alarm on ${member} cleared: ${now.freeBytes ?? '?'} bytes free`;
    out.push(event('info', { event: 'disk_alarm_cleared', ...fields }, message));
  }
  return out;
}

/** What changed from `before` to `after` (two snapshots of one member), in a stable order. */
export function operatorEvents(before: MemberStatus, after: MemberStatus): OperatorEvent[] {
  const out = [
    ...membershipEvents(before, after),
    ...diskEvents(before, after),
    ...memoryEvents(before, after),
  ];
  const was = groupsOf(before);
  const now = groupsOf(after);
  for (const [group, g] of now) {
    const old = was.get(group);
    if (old === undefined) {
      out.push({ level: 'info', fields: { event: 'replica_added', member: after.id,
        spool: g.spool, group }, message: `${after.id} now holds a replica of ${what(g)}` });
      // A replica that knew its primary (or opened as one) before the first sample says so,
      // as if it had started with none: otherwise whether that line appears depends on timing.
      const unknown = { ...g, leaderId: null, term: 0, serving: false, failure: null };
      out.push(...leaderEvents(after.id, unknown, g), ...localEvents(after.id, unknown, g));
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
