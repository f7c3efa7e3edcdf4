// The SpoolService operations as values: what a gateway sends a member (a `Call`) and what each
// operation answers (`OpResults`). One `Call` variant per SpoolService method, named after it.

import type {
  Delivery,
  DeleteMode,
  ListQuery,
  MessageListQuery,
  MessageView,
  Page,
  PeekResult,
  QueueView,
  SendRequest,
  SendResult,
  SettingsInput,
  SettingsPatch,
  SpoolView,
  StatsPage,
  StatsQuery,
  TokenRef,
} from '@spoolmq/engine';

export type Call =
  | { readonly op: 'checkTarget'; readonly spool: string; readonly queue?: string }
  | { readonly op: 'describeSpool'; readonly spool: string }
  | { readonly op: 'spoolStats'; readonly spool: string; readonly query: StatsQuery }
  | { readonly op: 'listQueues'; readonly spool: string; readonly query: ListQuery }
  | { readonly op: 'describeQueue'; readonly spool: string; readonly queue: string }
  | {
      readonly op: 'createQueue';
      readonly spool: string;
      readonly queue: string;
      readonly settings: SettingsInput;
    }
  | {
      readonly op: 'updateQueue';
      readonly spool: string;
      readonly queue: string;
      readonly settings: SettingsPatch;
    }
  | {
      readonly op: 'deleteQueue';
      readonly spool: string;
      readonly queue: string;
      readonly mode: DeleteMode;
    }
  | {
      readonly op: 'send';
      readonly spool: string;
      readonly queue: string;
      readonly request: SendRequest;
    }
  | {
      readonly op: 'receive';
      readonly spool: string;
      readonly queue: string;
      readonly waitMs: number;
    }
  | { readonly op: 'ack'; readonly spool: string; readonly lease: string }
  | { readonly op: 'nack'; readonly spool: string; readonly lease: string }
  | { readonly op: 'fail'; readonly spool: string; readonly lease: string }
  | { readonly op: 'renew'; readonly spool: string; readonly lease: string }
  | {
      readonly op: 'release';
      readonly spool: string;
      readonly lease: string;
      readonly delayMs: number;
    }
  | { readonly op: 'peek'; readonly spool: string; readonly handle: string }
  | {
      readonly op: 'recover';
      readonly spool: string;
      readonly token: TokenRef;
      readonly delayMs: number;
    }
  | { readonly op: 'discard'; readonly spool: string; readonly token: TokenRef }
  | {
      readonly op: 'listMessages';
      readonly spool: string;
      readonly queue: string;
      readonly query: MessageListQuery;
    }
  | { readonly op: 'failureHead'; readonly spool: string; readonly queue: string }
  | {
      readonly op: 'ackAndSend';
      readonly spool: string;
      readonly lease: string;
      readonly queue: string;
      readonly request: SendRequest;
    };

export type Op = Call['op'];

/** The call variant of one operation. */
export type CallOf<O extends Op> = Extract<Call, { readonly op: O }>;

/** What each operation resolves with (the SpoolService method's result). */
export interface OpResults {
  checkTarget: void;
  describeSpool: SpoolView;
  spoolStats: StatsPage;
  listQueues: Page<QueueView>;
  describeQueue: QueueView;
  createQueue: QueueView;
  updateQueue: QueueView;
  deleteQueue: 'deleted' | 'accepted';
  send: SendResult;
  receive: Delivery | null;
  ack: void;
  nack: void;
  release: void;
  fail: void;
  renew: { readonly leaseExpiresAtMs?: number };
  peek: PeekResult;
  recover: void;
  discard: void;
  listMessages: Page<MessageView>;
  failureHead: Delivery | null;
  ackAndSend: SendResult;
}

/**
 * Operations that may change state: if the stream breaks after such a call was written and
 * before its answer, the outcome is unknown (500 operation_unconfirmed), never retried. Renew
 * only moves a lease's expiry forward, so repeating it is harmless and it is retried like a read.
 */
export const WRITE_OPS: ReadonlySet<Op> = new Set<Op>([
  'createQueue',
  'updateQueue',
  'deleteQueue',
  'send',
  'ack',
  'nack',
  'release',
  'fail',
  'recover',
  'discard',
  'ackAndSend',
]);
