// What one Raft transport frame carries: the messages of each group, in send order. Its own file
// so the frame writer and reader and the codec that fronts them share it without a circle.

import type { GroupId, Message } from '../types.js';

/** Messages of one group, in send order. */
export interface FrameBatch {
  readonly group: GroupId;
  readonly messages: readonly Message[];
}
