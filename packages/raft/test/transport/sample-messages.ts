// One message of every variant, with fields away from their defaults, for round-trip tests.

import { EntryType, MessageType, type Message } from '../../src/types.js';

const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);

export function sampleMessages(from = 'n1', to = 'n2'): Message[] {
  const big = 2 ** 52 + 7;
  return [
    {
      type: MessageType.AppendEntries,
      from,
      to,
      term: 7,
      prevLogIndex: big - 3,
      prevLogTerm: 6,
      leaderCommit: big - 5,
      leaderTick: 123_456,
      entries: [
        { index: big - 2, term: 6, type: EntryType.Normal, data: bytes(0, 1, 2, 255) },
        { index: big - 1, term: 7, type: EntryType.Noop, data: new Uint8Array(0) },
        { index: big, term: 7, type: EntryType.ConfChange, data: bytes(9) },
      ],
    },
    { type: MessageType.AppendEntries, from, to, term: 1, prevLogIndex: 0, prevLogTerm: 0, leaderCommit: 0, leaderTick: 0, entries: [] },
    {
      type: MessageType.AppendEntriesResponse,
      from,
      to,
      term: 7,
      success: false,
      matchIndex: 40,
      conflictIndex: 31,
      conflictTerm: 5,
      leaderTick: 99,
    },
    { type: MessageType.AppendEntriesResponse, from, to, term: 7, success: true, matchIndex: 41, conflictIndex: 0, conflictTerm: 0, leaderTick: 100 },
    { type: MessageType.RequestVote, from, to, term: 8, preVote: true, lastLogIndex: 41, lastLogTerm: 7, transfer: true },
    { type: MessageType.RequestVote, from, to, term: 8, preVote: false, lastLogIndex: 0, lastLogTerm: 0, transfer: false },
    { type: MessageType.RequestVoteResponse, from, to, term: 8, preVote: true, granted: true },
    { type: MessageType.RequestVoteResponse, from, to, term: 9, preVote: false, granted: false },
    {
      type: MessageType.InstallSnapshot,
      from,
      to,
      term: 9,
      meta: { index: 1000, term: 8, config: { voters: ['n1', 'n2', 'n3'], learners: ['n4'] } },
      offset: 65_536,
      chunk: bytes(5, 4, 3, 2, 1),
      done: true,
    },
    {
      type: MessageType.InstallSnapshot,
      from,
      to,
      term: 9,
      meta: { index: 1, term: 1, config: { voters: ['n1'], learners: [] } },
      offset: 0,
      chunk: new Uint8Array(0),
      done: false,
    },
    { type: MessageType.InstallSnapshotResponse, from, to, term: 9, snapshotIndex: 1000, nextOffset: 65_541, done: true, success: true },
    { type: MessageType.TimeoutNow, from, to, term: 10 },
    {
      type: MessageType.RepairRequest,
      from,
      to,
      term: 11,
      origin: 'n5',
      damageIndex: big - 1,
      damageTerm: 10,
      lastLogIndex: 40,
      lastLogTerm: 9,
      snapshotIndex: 1000,
      snapshotOffset: 65_541,
    },
    {
      type: MessageType.AppendEntries,
      from,
      to,
      term: 11,
      prevLogIndex: 40,
      prevLogTerm: 9,
      leaderCommit: 0,
      leaderTick: 0,
      entries: [{ index: 41, term: 10, type: EntryType.Normal, data: bytes(1) }],
      repair: true,
    },
    {
      type: MessageType.InstallSnapshot,
      from,
      to,
      term: 11,
      meta: { index: 1000, term: 8, config: { voters: ['n1'], learners: [] } },
      offset: 0,
      chunk: bytes(7),
      done: false,
      repair: true,
    },
  ];
}

/** A message as plain data (byte views become number arrays), for deep equality. */
export function plain(value: unknown): unknown {
  if (value instanceof Uint8Array) return [...value];
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) out[key] = plain(field);
    return out;
  }
  return value;
}
