// One transport per member process, many Raft groups: the router registers the transport's one
// message handler and hands each message to the RaftNode of its group.

import type { GroupId, Message, Transport } from '../types.js';

/** The part of RaftNode the router needs. */
export interface MessageReceiver {
  receive(message: Message): void;
}

export class GroupRouter {
  private readonly nodes = new Map<GroupId, MessageReceiver>();
  private unknownCount = 0;

  /**
   * Routes `transport`'s incoming messages. `onUnknownGroup` sees messages for groups not added
   * (a member may create the group then, e.g. when added to it); they are dropped otherwise.
   */
  constructor(
    transport: Transport,
    private readonly onUnknownGroup: (group: GroupId, message: Message) => void = () => undefined,
  ) {
    transport.onMessage((group, message) => this.route(group, message));
  }

  add(group: GroupId, node: MessageReceiver): void {
    this.nodes.set(group, node);
  }

  remove(group: GroupId): void {
    this.nodes.delete(group);
  }

  /** Messages that arrived for a group with no node. */
  unknownMessages(): number {
    return this.unknownCount;
  }

  private route(group: GroupId, message: Message): void {
    const node = this.nodes.get(group);
    if (node !== undefined) {
      node.receive(message);
      return;
    }
    this.unknownCount += 1;
    this.onUnknownGroup(group, message);
  }
}
