// The SpoolService operations as values: what a gateway sends a member (a `Call`, one variant per
// SpoolService method, named after it: these are the call fields of each operation) and what each
// answers (`OpResults`, read off the SpoolService interface). Everything else about an operation
// (its wire field, whether it writes, its result variant and codec) is its row in operations.ts.

import type {
  DeleteMode,
  ListQuery,
  MessageListQuery,
  SendRequest,
  SettingsInput,
  SettingsPatch,
  SpoolService,
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

/** What each operation resolves with: the SpoolService method's result (one name per method). */
export type OpResults = { [O in Op]: Awaited<ReturnType<SpoolService[O]>> };

/** The arguments of the SpoolService method of an operation (the spool first). */
export type OpArgs<O extends Op> = Parameters<SpoolService[O]>;
